import { describe, expect, it } from "vitest";
import { printedSchema } from "./index.ts";

describe("collector schema", () => {
  it("keeps the issue's fixed names", () => {
    const sdl = printedSchema();
    for (const name of [
      "collectorTasks: [CollectorTask!]!",
      "collectorTask(id: ID!): CollectorTask",
      "createCollectorTask(input: CreateCollectorTaskInput!): CollectorTask!",
      "updateCollectorTask(id: ID!, input: UpdateCollectorTaskInput!): CollectorTask!",
      "startCollectorTask(id: ID!, reset: Boolean = false): CollectorTask!",
      "stopCollectorTask(id: ID!): CollectorTask!",
      "resetCollectorTask(id: ID!): CollectorTask!",
      "collectorProgress(taskId: ID!): CollectorProgress!",
    ]) {
      expect(sdl).toContain(name);
    }
    expect(sdl).toMatch(/enum CollectorSink \{\n\s+DATABASE\n\s+KAFKA\n\s+NATS\n\}/);
    expect(sdl).toMatch(/enum CollectorStatus \{\n\s+COMPLETED\n\s+ERROR\n\s+IDLE\n\s+RUNNING\n\s+STOPPED\n\}/);
    for (const field of ["status: CollectorStatus!", "total: Int!", "filteredCount: Int!", "producedCount: Int!", "lastError: String!", "lastUpdate: DateTime"]) {
      expect(sdl.slice(sdl.indexOf("type CollectorProgress {"))).toContain(field);
    }
  });
});
