// npm run schema:print — writes schema.graphql (checked by a test to match the code).
import { writeFileSync } from "node:fs";
import { printedSchema } from "./index.ts";

writeFileSync(new URL("../../../schema.graphql", import.meta.url), printedSchema());
console.log("schema.graphql written");
