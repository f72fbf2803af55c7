package cmdutiltest

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type sketchInner struct {
	Text string `json:"text"`
	Raw  uint64 `json:"raw,omitempty"`
}

type sketchBase struct {
	Device string `json:"device"`
}

type sketchDoc struct {
	sketchBase
	Items   []sketchInner `json:"items"`
	Next    *sketchInner  `json:"next,omitempty"`
	When    time.Time     `json:"when"` // marshals itself: no keys
	Names   []string      `json:"names"`
	skipped int
	Hidden  string `json:"-"`
}

func TestSketchMatchesTheType(t *testing.T) {
	for _, tc := range []struct {
		sketch string
		want   []string
	}{
		{`{"device","items":[{"text","raw"}],"next":{"text","raw"},"when","names":[names]}`, nil},
		{`{"device","items":[{"text","raw"}],"next":{...},"when":"RFC 3339","names"}`, nil},
		{`{"device","items","next","when","names"}`, nil},
		{`{"device", "items": [...], "next", "when": N, "names"}`, nil},
		{`{"device","items":[{"text"}],"next","when","names"}`, []string{"doc.items.raw: in the document, not on the page"}},
		{`{"device","items","next","when","names","bdf"}`, []string{"doc.bdf: on the page, not in the document"}},
		{`{"items","next","when","names"}`, []string{"doc.device: in the document, not on the page"}},
		{`{"device","items","next","when":{"sec"},"names"}`, []string{"doc.when: the page spells out keys, the document has no object here"}},
	} {
		s, err := parseSketch(tc.sketch)
		if err != nil {
			t.Fatalf("%s: %v", tc.sketch, err)
		}
		got := compare("doc", s, typeKeys(reflect.TypeOf(sketchDoc{})))
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.sketch, d)
		}
	}
}

func TestSketchRefusesWhatDoesNotRead(t *testing.T) {
	for _, bad := range []string{`{"a",}`, `{"a","a"}`, `{"a":}`, `{"a"`, `{"a":[{"b"}}`, `{"a"} x`, `{a}`} {
		if _, err := parseSketch(bad); err == nil {
			t.Errorf("%s read", bad)
		}
	}
}

func TestSketchesFindsThemOnAPage(t *testing.T) {
	page := t.TempDir() + "/p.md"
	writeFile(t, page, "Intro.\n\n`set -o json`: `{\"device\",\n\"written\"}` and more.\n`apply -o json`:\n`{\"device\"}`.\nThe diff is by parameter:\n`{\"a\",\"b\"}`\n")
	got := Sketches(t, page)
	want := map[string]string{"set": `{"device", "written"}`, "apply": `{"device"}`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sketches (-want +got):\n%s", d)
	}
	if s := SketchAfter(t, page, "by parameter:"); !strings.Contains(s, `"a","b"`) {
		t.Errorf("SketchAfter: %q", s)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
