// Package benchdata makes the synthetic facts that benchmarks and tests
// of search at scale store: each names one of 20 services, one of 20
// actions and one of 25 moments, so that every word is shared by many
// facts, as a large store's common words are, and a runbook number keeps
// each fact distinct.
package benchdata

import "fmt"

var (
	services = []string{"billing", "auth", "search", "webhook", "scheduler", "gateway", "mailer", "reporting",
		"inventory", "checkout", "profile", "audit", "export", "import", "cache", "queue", "storage", "metrics",
		"ledger", "catalog"}
	actions = []string{"retries failed jobs", "logs every request", "rotates its keys", "is rolled back",
		"warms its cache", "pages the on-call engineer", "reads from the replica", "batches writes",
		"validates the schema", "streams results", "rate limits clients", "compresses payloads",
		"expires sessions", "shards by tenant", "migrates data", "signs responses", "drops stale entries",
		"emits traces", "reloads its config", "locks rows"}
	whens = []string{"after a deploy", "at midnight UTC", "when the queue backs up", "on a schema change",
		"before a release", "during load tests", "when a tenant is deleted", "after a failover",
		"when the disk fills", "on every pull request", "when tokens expire", "after an outage",
		"at the end of each sprint", "when the feature flag flips", "for enterprise tenants",
		"in the staging cluster", "on Mondays", "when latency exceeds 200ms", "during backups",
		"when a webhook fails", "after key rotation", "while migrating", "on cold start",
		"when memory is low", "for archived accounts"}
)

// Runbook is the i-th fact: the same for the same i in every package.
func Runbook(i int) string {
	return fmt.Sprintf("The %s service %s %s (runbook %d)", services[i%len(services)],
		actions[(i/len(services))%len(actions)], whens[(i/(len(services)*len(actions)))%len(whens)], i)
}
