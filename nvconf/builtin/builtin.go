// Package builtin is the NV parameter set built into cxray: the facts of
// the host database Debian's mstflint installs, without description text,
// so `cxray config` works on machines without mstflint.
package builtin

import (
	_ "embed"
	"sync"

	"github.com/cxray/cxray/nvconf"
)

//go:generate go run ../../tools/gen/nvgen -in /usr/share/mstflint/mlxconfig_dbs/mlxconfig_host.db -out host.nvfacts

//go:embed host.nvfacts
var hostFacts string

// Source is how the built-in set names itself.
const Source = "built-in"

var load = sync.OnceValues(func() (*nvconf.DB, error) { return nvconf.ReadFacts(Source, hostFacts) })

// Load returns the built-in parameter set, parsed once and shared (a DB is
// read-only after loading).
func Load() (*nvconf.DB, error) { return load() }

// Facts returns the embedded facts file, for reproducibility checks.
func Facts() string { return hostFacts }
