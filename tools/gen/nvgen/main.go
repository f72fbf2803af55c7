// Command nvgen derives cxray's built-in NV parameter set from mstflint's
// SQLite database: facts only (TLV names, types, classes, sizes; parameter
// offsets, sizes, types, enum values, valid bits, limits and rules), no
// description text. Run through `go generate ./nvconf/builtin`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cxray/cxray/nvconf"
)

func main() {
	in := flag.String("in", nvconf.MstflintPath, "SQLite NV database to read (Debian's mstflint installs it)")
	out := flag.String("out", "host.nvfacts", "facts file to write")
	flag.Parse()
	b, err := nvconf.GenerateFacts(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nvgen:", err)
		fmt.Fprintln(os.Stderr, "nvgen: install the database with 'apt-get install -y mstflint' or pass -in FILE")
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "nvgen:", err)
		os.Exit(1)
	}
}
