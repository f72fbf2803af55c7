// Package source picks the register database cxray uses: one given by the
// user, the machine's installed ADB, or the built-in one.
package source

import (
	"os"
	"strings"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

// EnvADB names the environment variable that points at an ADB file.
const EnvADB = "CXRAY_ADB"

// Builtin is the name that selects the built-in database explicitly.
const Builtin = "builtin"

// Installed describes an ADB found on this machine.
type Installed struct {
	Path     string `json:"path"`
	Revision string `json:"revision"`
}

// Found lists the installed ADBs (MFT's first) with their revisions.
func Found() []Installed {
	var out []Installed
	for _, p := range adb.Installed() {
		rev := ""
		if f, err := os.Open(p); err == nil {
			head := make([]byte, 64<<10)
			n, _ := f.Read(head)
			f.Close()
			rev = adb.PeekRevision(head[:n])
		}
		out = append(out, Installed{Path: p, Revision: rev})
	}
	return out
}

// Open returns the database to use. In order:
//   - path, or $CXRAY_ADB when path is empty: that ADB file ("builtin"
//     selects the built-in database);
//   - the machine's installed ADB when its revision differs from the
//     built-in one (NVIDIA MFT is often newer);
//   - the built-in database, with descriptions read from the installed ADB
//     when that has the same revision.
func Open(path string) (*prm.DB, error) {
	if path == "" {
		path = os.Getenv(EnvADB)
	}
	switch {
	case strings.EqualFold(path, Builtin):
		return builtin.Load()
	case path != "":
		return Load(path)
	}
	found := Found()
	if len(found) == 0 {
		return builtin.Load()
	}
	inst := found[0]
	if inst.Revision != builtin.Revision() {
		return withSelectors(adb.LoadFile(inst.Path))
	}
	d, err := adb.OpenDescriptions(inst.Path)
	if err != nil {
		return builtin.Load() // descriptions are a nicety; the facts are built in
	}
	// A private instance, so that the shared one stays description-free.
	db, err := builtin.New()
	if err != nil {
		return nil, err
	}
	db.Source = builtin.Source + " (descriptions from " + inst.Path + ")"
	db.SetDescriber(d)
	return db, nil
}

// Load loads a database file: an ADB, or the facts format cxray generates.
func Load(path string) (*prm.DB, error) {
	if strings.EqualFold(path, Builtin) {
		return builtin.Load()
	}
	return withSelectors(adb.LoadFile(path))
}

// withSelectors completes an older database's unions with the built-in
// database's selectors (prm.DB.AdoptSelectors).
func withSelectors(db *prm.DB, err error) (*prm.DB, error) {
	if err != nil {
		return nil, err
	}
	if ref, rerr := builtin.Load(); rerr == nil && ref.Revision != db.Revision {
		db.AdoptSelectors(ref)
	}
	return db, nil
}
