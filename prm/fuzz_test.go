package prm_test

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// FuzzDecode: arbitrary bytes as any register of the built-in database
// decode without panicking, render, and survive the encode round trip.
func FuzzDecode(f *testing.F) {
	db, err := builtin.Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(0), []byte{1, 2, 3})
	f.Add(uint16(17), make([]byte, 256))
	f.Add(uint16(100), []byte("MT_0000000838 and more text to fill a buffer with"))
	f.Fuzz(func(t *testing.T, pick uint16, data []byte) {
		r := db.Registers[int(pick)%len(db.Registers)]
		p, err := db.RegisterPlan(r)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, max(p.Bytes, len(data)-len(data)%4))
		copy(buf, data)
		d, err := p.Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		d.AppendJSON(nil, prm.JSONOptions{})
		d.Rows()
		out := make([]byte, len(buf))
		if err := p.Encode(out, d.Assignments()); err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		d2, err := p.Decode(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.AppendJSON(nil, prm.JSONOptions{Raw: true})) != string(d2.AppendJSON(nil, prm.JSONOptions{Raw: true})) {
			t.Fatalf("%s: round trip differs", r.Name)
		}
	})
}

// Whatever the arguments, ParseAssignments splits path=value without
// losing or inventing anything: the parts print back into arguments that
// parse the same.
func FuzzParseAssignments(f *testing.F) {
	f.Add("admin_status=up", " local_port = 0x1 ", "psid=MT_0000000838")
	f.Add("a==b", "=x", "noequals")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		as, err := prm.ParseAssignments([]string{a, b, c})
		if err != nil {
			return
		}
		if len(as) != 3 {
			t.Fatalf("%d assignments from 3 arguments", len(as))
		}
		var args []string
		for _, x := range as {
			if x.Path == "" || x.Path != strings.TrimSpace(x.Path) || x.Value != strings.TrimSpace(x.Value) || strings.Contains(x.Path, "=") {
				t.Fatalf("assignment %+v", x)
			}
			args = append(args, x.Path+"="+x.Value)
		}
		again, err := prm.ParseAssignments(args)
		if err != nil || !reflect.DeepEqual(again, as) {
			t.Fatalf("%v -> %v; %v -> %v %v", []string{a, b, c}, as, args, again, err)
		}
	})
}

// Whatever value a user gives a field, encode refuses it or stores bits
// that, given back as the raw number, encode the same; and what the table
// shows of it (its raw number in parentheses, or the value itself) encodes
// the same bits again.
func FuzzFieldValue(f *testing.F) {
	db, err := builtin.Load()
	if err != nil {
		f.Fatal(err)
	}
	type field struct{ reg, path string }
	fields := []field{{"PAOS", "admin_status"}, {"PAOS", "local_port"}, {"MTMP", "temperature_threshold_hi"}, {"MGIR", "fw_info.psid"},
		{"MGIR", "hw_info.manufacturing_base_mac"}, {"MGIR", "fw_info.date"}, {"PGUID", "node_guid"}, {"PDDR", "page_data.pddr_module_info_ext.rx_power_low_th"},
		{"PPCNT", "counter_set.eth_802_3_cntrs_grp_data_layout.a_frames_transmitted_ok"}}
	for _, v := range []string{"up", "0x1", "-10", "MT_0000000838", "b8:3f:d2:d2:0a:20", "2023-10-05", "b83f:d203:00d2:0a20", "99999999999999999999", "true"} {
		f.Add(uint8(0), v)
	}
	f.Fuzz(func(t *testing.T, pick uint8, value string) {
		fd := fields[int(pick)%len(fields)]
		r, _ := db.Register(fd.reg)
		p, err := db.RegisterPlan(r)
		if err != nil {
			t.Fatal(err)
		}
		buf := p.NewBuffer()
		if err := p.Encode(buf, []prm.Assignment{{Path: fd.path, Value: value}}); err != nil {
			return
		}
		d, err := p.Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Get(fd.path)
		if err != nil {
			t.Skip() // a union member the written selector does not show
		}
		check := func(what, text string) {
			b2 := p.NewBuffer()
			if err := p.Encode(b2, []prm.Assignment{{Path: fd.path, Value: text}}); err != nil {
				t.Fatalf("%s %s=%q stored, but %s %q does not encode: %v", fd.reg, fd.path, value, what, text, err)
			}
			if !bytes.Equal(b2, buf) {
				t.Fatalf("%s %s=%q and %s %q encode differently", fd.reg, fd.path, value, what, text)
			}
		}
		shown := prm.FormatValue(v)
		if i := strings.LastIndex(shown, " ("); i > 0 && strings.HasSuffix(shown, ")") {
			shown = shown[i+2 : len(shown)-1]
		}
		if strings.HasPrefix(shown, `"`) {
			if s, err := strconv.Unquote(shown); err == nil {
				shown = s
			}
		}
		if shown != "" && !strings.HasPrefix(shown, "{") {
			check("its shown value", shown)
		}
	})
}
