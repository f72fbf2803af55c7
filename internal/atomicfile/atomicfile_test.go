package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, []byte("old"), 0o644)
	if err := Write(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	ents, _ := os.ReadDir(dir)
	if string(b) != "new" || len(ents) != 1 {
		t.Errorf("content %q, %d files left", b, len(ents))
	}
	if err := Write(filepath.Join(dir, "missing", "x.json"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
