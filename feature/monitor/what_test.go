package monitor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// --what splits at the commas between items, never inside REG[...].
func TestSplitWhat(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
	}{
		{[]string{"temp,counters"}, []string{"temp", "counters"}},
		{[]string{"PDDR[page_select=0,local_port=1]"}, []string{"PDDR[page_select=0,local_port=1]"}},
		{[]string{"temp, PDDR[page_select=0, local_port=1] ,MTMP[sensor_index=0]"}, []string{"temp", "PDDR[page_select=0, local_port=1]", "MTMP[sensor_index=0]"}},
		{[]string{"temp", "counters,temp", ",,"}, []string{"temp", "counters"}},
		{[]string{"PDDR[page_select=0,local_port=1"}, []string{"PDDR[page_select=0,local_port=1"}},
		{[]string{"a]b,c"}, []string{"a]b", "c"}},
	} {
		if d := cmp.Diff(c.want, SplitWhat(c.in)); d != "" {
			t.Errorf("SplitWhat(%q) (-want +got):\n%s", c.in, d)
		}
	}
	// The help's own example is one register collector with two index
	// fields.
	cs, err := Collectors(SplitWhat([]string{"temp,PDDR[page_select=0,local_port=1]"}), nil)
	if err != nil || len(cs) != 2 || cs[1].(RegCollector).Key() != "pddr.page_select_0.local_port_1" {
		t.Fatalf("collectors %v, %v", cs, err)
	}
}

// Whatever the values, the items SplitWhat returns, joined with commas,
// split back into the same items, and none is blank.
func FuzzSplitWhat(f *testing.F) {
	for _, s := range []string{"temp,counters", "PDDR[page_select=0,local_port=1],temp", "a[[b,c]],d", "x]y,[z", " , "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		items := SplitWhat([]string{s})
		for _, it := range items {
			if strings.TrimSpace(it) == "" {
				t.Fatalf("%q: a blank item in %q", s, items)
			}
		}
		if again := SplitWhat([]string{strings.Join(items, ",")}); !cmp.Equal(items, again) && !(len(items) == 0 && len(again) == 0) {
			t.Fatalf("%q -> %q; joined back -> %q", s, items, again)
		}
	})
}
