package health_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/feature/health"
)

func TestParseUnusedPorts(t *testing.T) {
	got, err := health.ParseUnusedPorts([]byte("# ports left unused\r\n\r\n   *  2\r\n0000:81:00.0 1,2 # both\n03:00.1\t1\n0000:81:00.0 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := health.UnusedPorts{"*": {2}, "0000:81:00.0": {1, 2}, "0000:03:00.1": {1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{2, 1}, got.For("0000:81:00.0")); d != "" {
		t.Errorf("For (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{2}, got.For("0000:04:00.0")); d != "" {
		t.Errorf("For another device (-want +got):\n%s", d)
	}
	for in, msg := range map[string]string{
		"0000:03:00.0\n":        "line 1: 0000:03:00.0 names no port",
		"\n\neth0 2\n":          `line 3: "eth0" is not a PCI address`,
		"* 0\n":                 `line 1: "0" is not a port number`,
		"* 2 x\n":               `line 1: "x" is not a port number`,
		"0000:03:00.9 1\n":      `"0000:03:00.9" is not a PCI address`,
		"0000:03:00.0 1 256\n ": `"256" is not a port number`,
	} {
		if _, err := health.ParseUnusedPorts([]byte(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", in, err, msg)
		}
	}
}

// Whatever the input, a parse either fails or gives devices that are *
// or a PCI address and ports in 1..255; written back out, it parses to
// the same.
func FuzzParseUnusedPorts(f *testing.F) {
	for _, s := range []string{"* 2\n", "0000:81:00.0 1,2\r\n", "# c\n03:00.0\t1 2\n", "x", "* 1,,2", "0000:03:00.7 255"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := health.ParseUnusedPorts(b)
		if err != nil {
			return
		}
		var lines []string
		for d, ps := range u {
			if d != "*" && len(d) != 12 {
				t.Fatalf("device %q", d)
			}
			for _, p := range ps {
				if p < 1 || p > 255 {
					t.Fatalf("port %d", p)
				}
				lines = append(lines, fmt.Sprintf("%s %d", d, p))
			}
		}
		sort.Strings(lines)
		again, err := health.ParseUnusedPorts([]byte(strings.Join(lines, "\n")))
		if err != nil {
			t.Fatalf("written back: %v", err)
		}
		norm := func(u health.UnusedPorts) health.UnusedPorts {
			for _, ps := range u {
				sort.Ints(ps)
			}
			return u
		}
		if d := cmp.Diff(norm(u), norm(again)); d != "" {
			t.Fatalf("round trip (-first +again):\n%s", d)
		}
	})
}
