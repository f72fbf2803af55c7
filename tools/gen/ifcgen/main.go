// Command ifcgen derives the built-in command database from the kernel's
// mlx5_ifc.h and device.h (Debian's linux-headers-*-common): facts only
// (layout names, offsets, widths, enum values, opcodes, capability types,
// status codes), with each input's sha256. Run through
// `go generate ./prm/cmdb`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cxray/cxray/prm/cmdb"
	"github.com/cxray/cxray/prm/ifc"
)

func main() {
	in := flag.String("in", "", "mlx5_ifc.h to read (default: the newest under /usr/src)")
	out := flag.String("out", "ifc.facts", "facts file to write")
	flag.Parse()
	path := *in
	if path == "" {
		p, err := ifc.Find()
		if err != nil {
			fmt.Fprintln(os.Stderr, "ifcgen:", err)
			os.Exit(1)
		}
		path = p
	}
	b, err := cmdb.Generate(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ifcgen:", err)
		fmt.Fprintln(os.Stderr, "ifcgen: install the headers with 'apt-get install -y linux-headers-amd64' or pass -in FILE")
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "ifcgen:", err)
		os.Exit(1)
	}
}
