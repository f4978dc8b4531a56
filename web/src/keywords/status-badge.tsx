import type { CrawlStatus } from "../gql/graphql.ts";

export const StatusBadge = ({ status }: { status: CrawlStatus }) => (
  <span className={`badge state-${status.toLowerCase()}`}>{status}</span>
);
