// Command prmgen derives the built-in register database from an installed
// ADB: facts only (names, IDs, offsets, widths, access kinds, enum names and
// values, revision), no description text. Run through `go generate ./prm/builtin`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/facts"
)

func main() {
	in := flag.String("in", adb.MstflintPath, "ADB file to read (Debian's mstflint installs it)")
	out := flag.String("out", "hca.facts", "facts file to write")
	flag.Parse()
	b, err := facts.Generate(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "prmgen:", err)
		fmt.Fprintln(os.Stderr, "prmgen: install the database with 'apt-get install -y mstflint' or pass -in FILE")
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "prmgen:", err)
		os.Exit(1)
	}
}
