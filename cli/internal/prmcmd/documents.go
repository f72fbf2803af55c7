package prmcmd

import "github.com/cxray/cxray/feature/prmsearch"

// The JSON documents of prm list and prm search (-o json). Their fields
// are in the order of their keys, as encoding/json wrote the maps they
// replace, so the output did not change.

// listDocument is `prm list`.
type listDocument struct {
	Registers      []listItem `json:"registers"`
	SourceRevision string     `json:"source_revision"`
}

// listItem is one register of `prm list`.
type listItem struct {
	Name      string `json:"name"`
	ID        uint32 `json:"id"`
	SizeBytes int    `json:"size_bytes"`
	Node      string `json:"node"`
}

// searchDocument is `prm search`: the hits in the register database, the
// NV parameters, other PRM revisions and the command layouts, and names
// near the query when nothing matched.
type searchDocument struct {
	CommandRevision string          `json:"command_revision"`
	HasDescriptions bool            `json:"has_descriptions"`
	Hits            []prmsearch.Hit `json:"hits"`
	Query           string          `json:"query"`
	SourceRevision  string          `json:"source_revision"`
	Suggestions     []string        `json:"suggestions"`
}
