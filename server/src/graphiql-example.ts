// The document GraphiQL opens with: a spider's whole cycle, runnable by hand. Mutations need a
// spider or admin token in the Headers tab: {"Authorization": "Bearer <token>"}.
export const GRAPHIQL_EXAMPLE = `# Crawl control plane — a spider's cycle, by hand.
# 1. Create a token:  npm run token -- create --role admin
#    and put it in the Headers tab below: {"Authorization": "Bearer ccp_..."}
# 2. Run ImportKeywords once, then Claim; copy keyword.id and leaseToken into the
#    Variables of ReportPage / Complete (or Release), and watch Stats change.
#    Subscribe to Distribution in a second tab to see it live.

query Sources {
  sources { id name maxPages maxRetries staleAfterSeconds enabled keywordCount }
}

mutation ImportKeywords {
  importKeywords(source: "boss", cities: ["北京", "上海"], jobs: ["Python", "Java"]) {
    created existing
  }
}

mutation Claim {
  claimKeywords(source: "boss", crawlerId: "graphiql-1", limit: 1) {
    keyword { id city job status lastCompletedPage }
    startPage
    leaseToken
    resumed
  }
}

# Variables: {"id": "1", "lease": "<leaseToken>", "page": 1}
mutation ReportPage($id: ID!, $lease: String!, $page: Int!) {
  reportPageProgress(input: { keywordId: $id, leaseToken: $lease, page: $page, totalPages: 3, jobsFound: 15 }) {
    id status lastCompletedPage totalPages jobsFound
  }
}

mutation Complete($id: ID!, $lease: String!) {
  reportCrawlComplete(input: { keywordId: $id, leaseToken: $lease, status: COMPLETED }) { id status }
}

mutation Release($id: ID!, $lease: String!) {
  releaseKeyword(keywordId: $id, leaseToken: $lease) { id status lastCompletedPage }
}

query Stats {
  stats(source: "boss") {
    date total used unused jobsFound pagesCrawled
    byStatus { idle crawling completed failed partial }
  }
}

query History($id: ID!) {
  keyword(id: $id) {
    city job status
    events { from to reason crawlerId at }
    pageReports { page jobsFound reportedAt }
  }
}

subscription Distribution {
  crawlStatusDistribution(source: "boss") {
    byStatus { idle crawling completed failed partial }
    jobsFound pagesCrawled
  }
}
`;
