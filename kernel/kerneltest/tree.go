// Package kerneltest builds fake sysfs trees and fake netlink answerers for
// tests of the kernel backend and of what consumes it (the exporter, the
// CLI). It is imported by tests only.
//
// The trees are kept as text archives in testdata/ rather than as files,
// because sysfs paths hold colons (0000:c1:00.0), which Go module archives
// do not allow, and because they hold symbolic links.
package kerneltest

import (
	"embed"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

//go:embed testdata/*.txtar
var archives embed.FS

// CX7 is the archive of a two-port ConnectX-7 (see its header comment).
const CX7 = "cx7-2port"

// Entry is one file, link or empty directory of an archive.
type Entry struct {
	Path    string
	Content string // file content; "" for links and directories
	Link    string // link target, when the entry is a symbolic link
	Dir     bool   // an empty directory
}

// Entries parses a named archive.
func Entries(name string) ([]Entry, error) {
	b, err := archives.ReadFile("testdata/" + name + ".txtar")
	if err != nil {
		return nil, fmt.Errorf("kerneltest: no archive %q: %v", name, err)
	}
	return Parse(string(b))
}

// Parse reads the archive format: "-- path --" starts a file whose content
// follows up to the next header, "-- path -> target --" is a symbolic link,
// "-- path/ --" an empty directory; text before the first header is a
// comment.
func Parse(s string) ([]Entry, error) {
	var out []Entry
	var cur *Entry
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.Content = body.String()
			out = append(out, *cur)
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(s, "\n") {
		t := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			name := strings.TrimSuffix(strings.TrimPrefix(t, "-- "), " --")
			e := Entry{}
			if p, target, ok := strings.Cut(name, " -> "); ok {
				e.Path, e.Link = p, target
			} else if strings.HasSuffix(name, "/") {
				e.Path, e.Dir = strings.TrimSuffix(name, "/"), true
			} else {
				e.Path = name
			}
			if e.Path == "" || path.IsAbs(e.Path) || strings.Contains("/"+e.Path+"/", "/../") {
				return nil, fmt.Errorf("kerneltest: bad path %q", e.Path)
			}
			cur = &e
			continue
		}
		if cur != nil {
			body.WriteString(line)
		}
	}
	flush()
	return out, nil
}

// Tree writes a named archive under a new temporary directory and returns
// that directory: a sysfs root for kernel.Options.Root.
func Tree(t testing.TB, name string) string {
	t.Helper()
	es, err := Entries(name)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := Write(root, es); err != nil {
		t.Fatal(err)
	}
	return root
}

// Write materialises entries under root.
func Write(root string, es []Entry) error {
	for _, e := range es {
		p := filepath.Join(root, filepath.FromSlash(e.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		switch {
		case e.Dir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case e.Link != "":
			if err := os.Symlink(e.Link, p); err != nil {
				return err
			}
		default:
			if err := os.WriteFile(p, []byte(e.Content), 0o444); err != nil {
				return err
			}
		}
	}
	return nil
}

// Values maps each regular file under dir (a path inside the archive, such
// as "devices/.../infiniband/mlx5_0/ports/1/hw_counters") to its content
// without the trailing newline; tests use it to check that every value of
// the tree was read.
func Values(es []Entry, dir string) map[string]string {
	out := map[string]string{}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for _, e := range es {
		if e.Link != "" || e.Dir || !strings.HasPrefix(e.Path, prefix) {
			continue
		}
		rest := strings.TrimPrefix(e.Path, prefix)
		if strings.Contains(rest, "/") {
			continue
		}
		out[rest] = strings.TrimSuffix(e.Content, "\n")
	}
	return out
}
