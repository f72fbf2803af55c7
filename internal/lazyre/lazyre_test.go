package lazyre_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/internal/lazyre"
)

var word = lazyre.New(`(\w+)=(\d+)`)

// Nothing compiles until a method is called; then it behaves as regexp.
func TestCompiledOnFirstUse(t *testing.T) {
	r := lazyre.New(`^a+$`)
	if r.Compiled() {
		t.Fatal("compiled before any use")
	}
	if !r.MatchString("aaa") || r.MatchString("ab") {
		t.Error("MatchString differs from regexp's")
	}
	if !r.Compiled() {
		t.Error("not compiled after a use")
	}
	if diff := cmp.Diff([]string{"x=1", "x", "1"}, word.FindStringSubmatch("  x=1 y")); diff != "" {
		t.Errorf("FindStringSubmatch (-want +got):\n%s", diff)
	}
}

// A bad pattern is found by CompileAll, not at start-up.
func TestCompileAllFindsBadPattern(t *testing.T) {
	n := len(lazyre.CompileAll())
	lazyre.New(`(unclosed`)
	if got := len(lazyre.CompileAll()); got != n+1 {
		t.Errorf("CompileAll: %d errors, want %d", got, n+1)
	}
}
