package snapshot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestShippedData(t *testing.T) {
	if len(DefaultRules()) < 10 {
		t.Error("rules.yaml lost its rules")
	}
	for _, n := range Profiles() {
		if _, err := LoadProfile(n); err != nil {
			t.Errorf("profile %s: %v", n, err)
		}
	}
	if r, ok := DefaultRules().Lookup("PPCNT", "counter_set.x.a_frames_transmitted_ok"); !ok || r.Class != Counter {
		t.Errorf("PPCNT counters: %+v", r)
	}
	if r, _ := DefaultRules().Lookup("PDDR", "page_data.pddr_module_info_ext.temperature_high_th"); r.Class != Static {
		t.Errorf("thresholds must be static: %+v", r)
	}
	for _, bad := range []string{"name: x\nregisters: []\n", "registers:\n  - {register: PAOS, per: lane}\n", "registers:\n  - {reg: PAOS}\n"} {
		if _, err := ParseProfile([]byte(bad), "t"); err == nil {
			t.Errorf("profile %q accepted", bad)
		}
	}
	if _, err := ParseRules([]byte("- {match: 'x', class: sometimes}\n")); err == nil {
		t.Error("bad class accepted")
	}
}

func TestValJSON(t *testing.T) {
	for _, v := range []Val{Num(0), Num(1 << 53), Num(^uint64(0)), Str("MT_0000000834"), Str("123")} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Val
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(v) {
			t.Errorf("%v -> %s -> %v %v", v, b, back, err)
		}
	}
	if b, _ := json.Marshal(Num(1<<53 + 1)); b[0] != '"' {
		t.Errorf("numbers above 2^53 must be strings: %s", b)
	}
}

func file(rev string, fields ...Field) *File {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return &File{Format: Format, Version: Version, PRMRevision: rev, Devices: []Device{{BDF: "0000:03:00.0",
		Registers: []Register{{Register: "R", Key: "R", Times: []time.Time{t0, t0.Add(time.Minute), t0.Add(20 * time.Minute)}, Fields: fields}}}}}
}

func TestDiffClasses(t *testing.T) {
	b := file("Rev 0.57",
		Field{Path: "cfg", Class: Static, Value: Num(1)},
		Field{Path: "cnt", Class: Counter, Value: Num(100)},
		Field{Path: "wrap", Class: Counter, Value: Num(100)},
		Field{Path: "old_name", Bit: 64, Width: 8, Class: Static, Value: Num(7)},
		Field{Path: "gone", Bit: 96, Width: 4, Class: Static, Value: Num(1)},
		Field{Path: "moving", Class: Dynamic, Value: Num(5)},
	)
	n := file("Rev 0.64",
		Field{Path: "cfg", Class: Static, Value: Num(2)},
		Field{Path: "cnt", Class: Counter, Value: Num(160)},
		Field{Path: "wrap", Class: Counter, Value: Num(3)},
		Field{Path: "new_name", Bit: 64, Width: 8, Class: Static, Value: Num(7)},
		Field{Path: "fresh", Bit: 128, Width: 4, Class: Static, Value: Num(1)},
		Field{Path: "moving", Class: Dynamic, Value: Num(9), ExpectMotion: true, Values: []Val{Num(9), Num(9), Num(9)}},
	)
	n.Devices[0].Registers[0].Times[2] = n.Devices[0].Registers[0].Times[2].Add(time.Minute)
	rules := Rules{{Match: "R.moving", Class: Dynamic, ExpectMotion: true, MinSpan: 10 * time.Minute}}
	r := Diff(b, n, rules)
	if len(r.Static) != 1 || r.Static[0].Path != "cfg" {
		t.Errorf("static %+v", r.Static)
	}
	if len(r.Counters) != 2 || r.Counters[0].Rate == nil || *r.Counters[0].Delta != 60 || !strings.Contains(r.Counters[1].Note, "cleared or wrapped") {
		t.Errorf("counters %+v", r.Counters)
	}
	if len(r.Appeared) != 1 || r.Appeared[0].Path != "fresh" || len(r.Disappeared) != 1 || r.Disappeared[0].Path != "gone" {
		t.Errorf("appeared %+v disappeared %+v", r.Appeared, r.Disappeared)
	}
	if len(r.Stale) != 1 || r.Stale[0].Path != "moving" {
		t.Errorf("stale %+v", r.Stale)
	}
	if !r.Problems() || len(r.Notes) == 0 {
		t.Errorf("problems %v notes %v", r.Problems(), r.Notes)
	}
	// A span shorter than the rule's minimum is not judged.
	rules[0].MinSpan = time.Hour
	if r := Diff(b, n, rules); len(r.Stale) != 0 {
		t.Errorf("stale within min_span: %+v", r.Stale)
	}
}
