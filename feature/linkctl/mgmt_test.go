package linkctl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The default routes of both tables name their interfaces; other routes,
// the loopback and a missing file do not.
func TestDefaultRouteInterfaces(t *testing.T) {
	dir := t.TempDir()
	v4 := filepath.Join(dir, "route")
	v6 := filepath.Join(dir, "ipv6_route")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(v4, "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"+
		"eno1\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"+
		"ens9f0np0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	write(v6, "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 ibp24s0\n"+
		"fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 ens9f1np1\n"+
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n")
	got := DefaultRouteInterfaces([]string{v4, v6, filepath.Join(dir, "missing")})
	if diff := cmp.Diff([]string{"eno1", "ibp24s0"}, got); diff != "" {
		t.Errorf("default-route interfaces (-want +got):\n%s", diff)
	}
}

// A saved record loads back with its undo writes; a record cxray did not
// write is refused; Remove forgets it.
func TestStore(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "link")}
	c := &Change{Device: "emu:x.yaml@0000:03:00.0", Port: 2, What: "port_state DN",
		Undo: []Write{{Register: "PAOS", Index: []Field{{"local_port", "2"}}, Fields: []Field{{"admin_status", "1"}, {"ase", "1"}}}}}
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(c.Device, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Undo, got.Undo); diff != "" {
		t.Errorf("undo writes (-saved +loaded):\n%s", diff)
	}
	if _, err := s.Load(c.Device, 1); err == nil {
		t.Error("port 1 has no record, Load found one")
	}
	if err := os.WriteFile(s.path(c.Device, 2), []byte(`{"undo": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(c.Device, 2); err == nil {
		t.Error("a record without undo writes loaded")
	}
	if err := s.Remove(c.Device, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.path(c.Device, 2)); !os.IsNotExist(err) {
		t.Errorf("record still there after Remove: %v", err)
	}
}
