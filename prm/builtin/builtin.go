// Package builtin is the register database built into cxray: the facts of
// the HCA ADB that Debian's mstflint installs, without description text, so
// cxray works on machines without mstflint.
package builtin

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/facts"
)

//go:generate go run ../../tools/gen/prmgen -in /usr/share/mstflint/prm_dbs/hca/ext/register_access_table.adb -out hca.facts

//go:embed hca.facts
var hcaFacts string

// Source is how the built-in database names itself.
const Source = "built-in"

var load = sync.OnceValues(New)

// Load returns the built-in database. It is parsed once and shared; a
// prm.DB is safe for concurrent use.
func Load() (*prm.DB, error) { return load() }

// New parses a private instance of the built-in database, for callers that
// attach descriptions to it.
func New() (*prm.DB, error) { return facts.Read(Source, hcaFacts) }

// Revision is the built-in database's PRM revision, without parsing it all.
func Revision() string {
	_, rest, ok := strings.Cut(hcaFacts, "\nrev\t")
	if !ok {
		return ""
	}
	rev, _, _ := strings.Cut(rest, "\n")
	return rev
}

// Facts returns the embedded facts file, for reproducibility checks.
func Facts() string { return hcaFacts }
