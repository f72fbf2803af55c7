package kernel

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
	"github.com/cxray/cxray/kernel/kerneltest"
)

func TestHealthReporters(t *testing.T) {
	f := newFixture(t)
	f.kern.Health["pci/0000:c1:00.0"][0].Diagnose = []kerneltest.Pair{{Name: "Syndrome", Value: uint8(8)}, {Name: "Description", Value: "unrecoverable hardware error"}}
	f.kern.Health["pci/0000:c1:00.0"][1].State = 1
	f.kern.Health["pci/0000:c1:00.0"][1].Errors = 1
	d := f.open(t, "mlx5_0")
	rs, err := d.HealthReporters(ctx5(t), true)
	if err != nil {
		t.Fatal(err)
	}
	port := uint32(65535)
	yes := true
	no := false
	want := []HealthReporter{
		{Name: "fw", State: "healthy", AutoRecover: &no, AutoDump: &no, Diagnose: []FmsgPair{{"Syndrome", "8"}, {"Description", "unrecoverable hardware error"}}},
		{Name: "fw_fatal", State: "error", Errors: 1, GracePeriod: time.Minute, AutoRecover: &yes, AutoDump: &yes,
			DiagnoseErr: "kernel: the driver does not give the devlink health diagnose of fw_fatal (operation not supported)"},
		{Name: "vnic", State: "healthy", AutoRecover: &no, AutoDump: &no, Diagnose: []FmsgPair{{"total_error_queues", "0"}, {"cq_overrun", "0"}}},
		{Name: "tx", Port: &port, State: "healthy", Errors: 2, Recoveries: 2, GracePeriod: 500 * time.Millisecond, AutoRecover: &yes, AutoDump: &yes,
			LastDump: time.Unix(0, 1700000000000000000).UTC()},
		{Name: "rx", Port: &port, State: "healthy", GracePeriod: 500 * time.Millisecond, AutoRecover: &yes, AutoDump: &yes},
	}
	if d := cmp.Diff(want, rs); d != "" {
		t.Fatalf("reporters (-want +got):\n%s", d)
	}
	if s, desc, ok := rs[0].Syndrome(); !ok || s != 8 || desc != "unrecoverable hardware error" {
		t.Errorf("syndrome %d %q %v", s, desc, ok)
	}
	// Without CAP_NET_ADMIN the list reads, the diagnose says why not.
	f.kern.NoCapNetAdmin = true
	rs, err = d.HealthReporters(ctx5(t), true)
	if err != nil || len(rs) != 5 || rs[0].Diagnose != nil {
		t.Fatalf("no CAP_NET_ADMIN: %+v, %v", rs, err)
	}
	if want := "CAP_NET_ADMIN"; !strings.Contains(rs[0].DiagnoseErr, want) {
		t.Errorf("diagnose error %q lacks %q", rs[0].DiagnoseErr, want)
	}
	// A kernel without devlink.
	f.kern.NoDevlink = true
	if _, err := d.HealthReporters(ctx5(t), false); err == nil {
		var ue *UnsupportedError
		t.Errorf("no devlink: %v (want %T)", err, ue)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.HealthReporters(ctx, false); err == nil {
		t.Error("a cancelled context read")
	}
}

// fmsg builds a formatted message from items: "{" "}" "[" "]" "(" ")" for
// object, array and pair nests, "name:NAME", and values (uint8, uint32,
// uint64, string, bool; a false bool is a type without data).
func fmsg(t testing.TB, items ...any) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.NativeEndian
	for _, it := range items {
		switch v := it.(type) {
		case string:
			switch {
			case v == "{":
				ae.Flag(linuxabi.DEVLINK_ATTR_FMSG_OBJ_NEST_START, true)
			case v == "[":
				ae.Flag(linuxabi.DEVLINK_ATTR_FMSG_ARR_NEST_START, true)
			case v == "(":
				ae.Flag(linuxabi.DEVLINK_ATTR_FMSG_PAIR_NEST_START, true)
			case v == "}" || v == "]" || v == ")":
				ae.Flag(linuxabi.DEVLINK_ATTR_FMSG_NEST_END, true)
			case len(v) > 5 && v[:5] == "name:":
				ae.String(linuxabi.DEVLINK_ATTR_FMSG_OBJ_NAME, v[5:])
			default:
				ae.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, fmsgNulString)
				ae.String(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
			}
		case uint8:
			ae.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, fmsgU8)
			ae.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
		case uint32:
			ae.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, fmsgU32)
			ae.Uint32(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
		case uint64:
			ae.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, fmsgU64)
			ae.Uint64(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
		case bool:
			ae.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, fmsgFlag)
			if v {
				ae.Flag(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, true)
			}
		}
	}
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	outer := netlink.NewAttributeEncoder()
	outer.Bytes(linuxabi.DEVLINK_ATTR_FMSG, b)
	ob, err := outer.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

func TestParseFmsg(t *testing.T) {
	// vnic-like: a named object of pairs; an array; false and true bools.
	msg := fmsg(t, "{",
		"(", "name:vNIC env counters", "{",
		"(", "name:total_error_queues", uint32(3), ")",
		"(", "name:cq_overrun", uint64(1), ")",
		"}", ")",
		"(", "name:SQs", "[", "{", "(", "name:sqn", uint32(7), ")", "}", "{", "(", "name:sqn", uint32(9), ")", "}", "]", ")",
		"(", "name:stopped", false, ")",
		"(", "name:auto", true, ")",
		"(", "name:Syndrome", uint8(0), ")",
		"}")
	got, err := ParseFmsg(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := []FmsgPair{{"vNIC env counters.total_error_queues", "3"}, {"vNIC env counters.cq_overrun", "1"},
		{"SQs.sqn", "7"}, {"SQs.sqn", "9"}, {"stopped", "false"}, {"auto", "true"}, {"Syndrome", "0"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pairs (-want +got):\n%s", d)
	}
	for name, bad := range map[string][]byte{
		"unbalanced":      fmsg(t, "{", "(", "name:x", uint8(1), ")"),
		"extra end":       fmsg(t, "{", "}", "}"),
		"name outside":    fmsg(t, "name:x"),
		"value no type":   func() []byte { return rawItems(t, linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA) }(),
		"no fmsg":         nil,
		"wrong u8 length": rawTyped(t, fmsgU8, []byte{1, 2}),
		"unknown type":    rawTyped(t, 99, []byte{1}),
	} {
		if ps, err := ParseFmsg(bad); err == nil {
			t.Errorf("%s: parsed as %+v", name, ps)
		}
	}
}

func rawItems(t testing.TB, types ...uint16) []byte {
	ae := netlink.NewAttributeEncoder()
	for _, ty := range types {
		ae.Bytes(ty, []byte{0})
	}
	b, _ := ae.Encode()
	outer := netlink.NewAttributeEncoder()
	outer.Bytes(linuxabi.DEVLINK_ATTR_FMSG, b)
	ob, _ := outer.Encode()
	return ob
}

func rawTyped(t testing.TB, ty uint8, data []byte) []byte {
	ae := netlink.NewAttributeEncoder()
	ae.Flag(linuxabi.DEVLINK_ATTR_FMSG_PAIR_NEST_START, true)
	ae.String(linuxabi.DEVLINK_ATTR_FMSG_OBJ_NAME, "x")
	ae.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, ty)
	ae.Bytes(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, data)
	ae.Flag(linuxabi.DEVLINK_ATTR_FMSG_NEST_END, true)
	b, _ := ae.Encode()
	outer := netlink.NewAttributeEncoder()
	outer.Bytes(linuxabi.DEVLINK_ATTR_FMSG, b)
	ob, _ := outer.Encode()
	return ob
}

// FuzzParseFmsg: any answer parses or is refused, never more pairs than
// it has values (a false bool counts as one), every name a path of the
// names it holds.
func FuzzParseFmsg(f *testing.F) {
	f.Add(fmsg(f, "{", "(", "name:Syndrome", uint8(8), ")", "(", "name:Description", "x", ")", "}"))
	f.Add(fmsg(f, "{", "(", "name:a", "[", uint32(1), uint32(2), "]", ")", "}"))
	f.Add(fmsg(f, "{", "(", "name:b", false, ")", "}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := ParseFmsg(b)
		if err != nil {
			return
		}
		if len(ps) > len(b) {
			t.Fatalf("%d pairs from %d bytes", len(ps), len(b))
		}
	})
}

func TestDriverStats(t *testing.T) {
	f := newFixture(t)
	opts := f.opts()
	opts.Ethtool = f.kern.Ethtool
	d, err := Open(context.Background(), "mlx5_0", opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.DriverStats(ctx5(t), "ens1f0np0")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	for _, s := range kerneltest.CX7Stats() {
		want[s.Name] = s.Value
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stats (-want +got):\n%s", d)
	}
	// The driver adds statistics between the two requests once: read
	// again, whole.
	grew := false
	f.kern.StatsChanged = func(ifname string) {
		if !grew {
			grew = true
			f.kern.Stats[ifname] = append(f.kern.Stats[ifname], kerneltest.Stat{Name: "rx1_packets", Value: 5})
		}
	}
	got, err = d.DriverStats(ctx5(t), "ens1f0np0")
	if err != nil || got["rx1_packets"] != 5 || len(got) != len(want)+1 {
		t.Errorf("after the driver grew: %d stats, %v", len(got), err)
	}
	// More names than the room for them: the kernel would write past the
	// buffer; the fake refuses, and the read says so.
	f.kern.StatsChanged = func(ifname string) {
		for i := 0; i < statsSlack+1; i++ {
			f.kern.Stats[ifname] = append(f.kern.Stats[ifname], kerneltest.Stat{Name: "x", Value: 1})
		}
	}
	if _, err := d.DriverStats(ctx5(t), "ens1f0np0"); err == nil {
		t.Error("a count past the room read")
	}
	f.kern.StatsChanged = nil
	for name, wantErr := range map[string]any{"nosuch0": new(*NotFoundError), "lo": new(*UnsupportedError), "a/b": nil} {
		_, err := d.DriverStats(ctx5(t), name)
		if err == nil {
			t.Errorf("%s: read", name)
			continue
		}
		if wantErr != nil {
			switch w := wantErr.(type) {
			case **NotFoundError:
				if !errors.As(err, w) {
					t.Errorf("%s: %v (%T)", name, err, err)
				}
			case **UnsupportedError:
				if !errors.As(err, w) {
					t.Errorf("%s: %v (%T)", name, err, err)
				}
			}
		}
	}
}
