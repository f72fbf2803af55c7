package regcmd

import (
	"encoding/json"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm/units"
)

// The JSON documents of the reg verbs (-o json). Their fields are in the
// order of their keys, as encoding/json wrote the maps they replace, so
// the output did not change (cli/testdata/golden holds it).

// listDocument is `reg list`.
type listDocument struct {
	Device         string     `json:"device"`
	Registers      []listItem `json:"registers"`
	SourceRevision string     `json:"source_revision"`
}

// listItem is one register of `reg list`; Supported is left out without
// -d, or when the capability masks do not cover it.
type listItem struct {
	Name      string `json:"name"`
	ID        uint32 `json:"id"`
	SizeBytes int    `json:"size_bytes"`
	Supported *bool  `json:"supported,omitempty"`
}

// rawDocument is `reg get --id`: the register's bytes as big-endian
// dwords.
type rawDocument struct {
	Device    string   `json:"device"`
	Dwords    []string `json:"dwords"`
	ID        uint16   `json:"id"`
	SizeBytes int      `json:"size_bytes"`
}

// readingDocument is `reg get NAME`: the decoded fields, the index fields
// filled in (defaulted), the units of known fields, and the fields that
// mean nothing now (a condition of their description does not hold),
// whose values are bare numbers.
type readingDocument struct {
	Backend        dev.Backend             `json:"backend"`
	BDF            string                  `json:"bdf"`
	Defaulted      []string                `json:"defaulted"`
	Device         string                  `json:"device"`
	Fields         json.RawMessage         `json:"fields"`
	ID             uint32                  `json:"id"`
	NotValid       map[string]string       `json:"not_valid"`
	Register       string                  `json:"register"`
	SourceRevision string                  `json:"source_revision"`
	Units          map[string]units.Scaled `json:"units"`
	Via            dev.Backend             `json:"via"`
}

// setDocument is `reg set NAME`: the changes, the bytes written and the
// fields read back after.
type setDocument struct {
	Changes       []changeJSON    `json:"changes"`
	Device        string          `json:"device"`
	Fields        json.RawMessage `json:"fields"`
	ID            uint32          `json:"id"`
	NotVerifiable []string        `json:"not_verifiable"`
	Register      string          `json:"register"`
	Verified      bool            `json:"verified"`
	Written       []string        `json:"written"`
}

// rawSetDocument is `reg set --id`.
type rawSetDocument struct {
	Device    string   `json:"device"`
	ID        uint16   `json:"id"`
	Identical bool     `json:"identical"`
	ReadBack  []string `json:"read_back"`
	Written   []string `json:"written"`
}

// dryRunDocument is `reg set --dry-run`: nothing was written.
type dryRunDocument struct {
	Changes    []changeJSON `json:"changes"`
	Device     string       `json:"device"`
	DryRun     bool         `json:"dry_run"`
	ID         uint32       `json:"id"`
	Register   string       `json:"register"`
	WouldWrite []string     `json:"would_write"`
}
