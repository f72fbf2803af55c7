//go:build linux

package main

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The committed package is what the generator makes from the x/sys in
// go.mod: a changed list or an x/sys upgrade needs `go generate`.
func TestGeneratedUpToDate(t *testing.T) {
	want, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../internal/linuxabi/zlinuxabi.go")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("internal/linuxabi/zlinuxabi.go is stale; run `go generate ./internal/linuxabi` (-want +got):\n%s", d)
	}
}
