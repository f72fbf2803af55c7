package snapshot

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"
)

func sampleFile(t testing.TB) []byte {
	f := file("Rev 0.57",
		Field{Path: "temperature", Width: 16, Class: Dynamic, Value: Num(406), Text: "0x0196 (406)", Values: []Val{Num(400), Num(406)}},
		Field{Path: "sensor_name", Width: 64, Class: Static, Value: Str("ASIC"), Text: `"ASIC"`},
	)
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func readErr(t *testing.T, err error) *ReadError {
	t.Helper()
	var re *ReadError
	if !errors.As(err, &re) {
		t.Fatalf("want a ReadError, got %T %v", err, err)
	}
	return re
}

// A snapshot cut anywhere is refused as cut short, never half read.
func TestParseTruncated(t *testing.T) {
	b := sampleFile(t)
	if _, err := Parse(b, "s.json"); err != nil {
		t.Fatal(err)
	}
	end := len(strings.TrimRight(string(b), "\n"))
	for n := 0; n < end; n++ {
		f, err := Parse(b[:n], "s.json")
		if err == nil {
			t.Fatalf("cut at %d of %d bytes: read %d devices", n, end, len(f.Devices))
		}
		if re := readErr(t, err); n > 0 && re.Kind != ReadTruncated && !strings.Contains(string(b[:n]), "}") {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
	_, err := Parse(b[:len(b)/2], "s.json")
	if re := readErr(t, err); re.Kind != ReadTruncated || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("half: %v", err)
	}
}

func TestParseForeign(t *testing.T) {
	for in, want := range map[string]string{
		`{"device":"emu","register":"MGIR","fields":{}}`: "looks like 'cxray reg get -o json' output",
		`{"format":"prometheus","version":1}`:            `its format is "prometheus"`,
		`{"a":1}`:                                        `no "format" field (its keys: a)`,
		`[1,2]`:                                          "a JSON list",
		`hello`:                                          "not JSON",
	} {
		_, err := Parse([]byte(in), "x.json")
		if re := readErr(t, err); re.Kind != ReadForeign || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", in, err)
		}
	}
	b := sampleFile(t)
	for in, want := range map[string]string{
		string(b) + string(b): "two files joined",
		strings.Replace(string(b), `"version": 1`, `"version": "1"`, 1): "has the wrong type",
		strings.Replace(string(b), `"version": 1`, `"version": 9`, 1):   "newer than this cxray reads",
		"": "empty",
	} {
		if in == string(b) {
			t.Fatal("no edit")
		}
		_, err := Parse([]byte(in), "x.json")
		readErr(t, err)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want %q", in, err, want)
		}
	}
}

// Whatever the bytes, Parse does not panic; what it accepts marshals back
// into bytes it reads as the same snapshot.
func FuzzSnapshotJSON(f *testing.F) {
	f.Add(sampleFile(f))
	f.Add([]byte(`{"format":"cxray-snapshot","version":1,"devices":[{"bdf":"x"}]}`))
	f.Add([]byte(`{"format":"cxray-snapshot","version":1,"devices":[{"registers":[{"fields":[{"value":"s:x","values":["1","s:y"]}]}]}]}`))
	f.Add([]byte(`{"format":"cxray-snapshot","version":1,"devices":[{"bdf":"a","nv":{"settings":[{"name":"X","next_boot":"1","current":"2","class":"static"}]},` +
		`"os":{"netdevs":[{"name":"e","address":"02:00:00:00:00:01"}]},"caps":{"report":{"pages":[{"type":"GENERAL","fields":[{"path":"p","current":1,"max":2}]}]}}},` +
		`{"bdf":"b","nv":{"error":"x"},"os":{"error":"y"},"caps":{"note":"no command interface"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b, "fuzz")
		if err != nil {
			var re *ReadError
			if !errors.As(err, &re) {
				t.Fatalf("not a ReadError: %T %v", err, err)
			}
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := Parse(out, "again")
		if err != nil {
			t.Fatalf("what Parse read does not read back: %v\n%s", err, out)
		}
		// Empty lists are left out of the file, so they come back nil.
		if diff := cmp.Diff(s, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
		// A file compared with itself has nothing vanished and no static
		// change, when its names are unique (a diff matches by name).
		if r := Diff(s, again, nil); uniqueNames(s) && len(r.Vanished)+len(r.Static) > 0 {
			t.Fatalf("a snapshot differs from itself: vanished %+v static %+v", r.Vanished, r.Static)
		}
	})
}

// Whatever the YAML, ParseProfile does not panic; a profile it accepts
// has registers with valid repeats, and reads back the same after
// marshalling.
func FuzzProfileYAML(f *testing.F) {
	for _, p := range Profiles() {
		b, _ := data.ReadFile("profiles/" + p + ".yaml")
		f.Add(b)
	}
	f.Add([]byte("name: x\nregisters:\n  - register: PDDR\n    per: port\n    index: {page_select: Module_info_page}\n"))
	f.Add([]byte("name: fuzz\nregisters:\n  - register: \"0\"\n    index: {}\n"))
	f.Add([]byte("name: fuzz\nregisters:\n  - register: \"00\"\nrecord: []\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProfile(b, "fuzz")
		if err != nil {
			return
		}
		if len(p.Registers) == 0 || p.Name == "" {
			t.Fatalf("accepted %+v", p)
		}
		for _, r := range p.Registers {
			if r.Register == "" || (r.Per != "" && r.Per != "port" && r.Per != "module" && r.Per != "sensor") {
				t.Fatalf("accepted entry %+v", r)
			}
		}
		out, err := yaml.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseProfile(out, "again")
		if err != nil {
			t.Fatalf("does not read back: %v\n%s", err, out)
		}
		// An empty list and an absent one mean the same to a profile.
		if diff := cmp.Diff(p, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip:\n%s", diff)
		}
	})
}

// uniqueNames: devices, their registers, NV parameters and interfaces are
// each named once.
func uniqueNames(f *File) bool {
	seen := map[string]bool{}
	once := func(k string) bool {
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	for i := range f.Devices {
		d := &f.Devices[i]
		dk := devKey(d)
		if !once("d " + dk) {
			return false
		}
		for _, r := range d.Registers {
			if !once("r " + dk + " " + r.Key) {
				return false
			}
			for _, fl := range r.Fields {
				if !once("f " + dk + " " + r.Key + " " + fl.Path) {
					return false
				}
			}
		}
		if d.NV != nil {
			for _, s := range d.NV.Settings {
				if !once("n " + dk + " " + s.Name) {
					return false
				}
			}
		}
		if d.OS != nil {
			for _, n := range d.OS.Netdevs {
				if !once("o " + dk + " " + n.Name) {
					return false
				}
			}
		}
	}
	return true
}
