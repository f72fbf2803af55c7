package scenario_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
)

// A port runs InfiniBand when the NV configuration in effect at power-on
// says so: the cx7-1p-ndr profile by default, a cx7-2p400g port when the
// file configures LINK_TYPE_P<n>=IB. IB ports get IPoIB names and LIDs
// numbered from 2 unless given; the ib: key lands in the port's spec;
// numa_node in the device's.
func TestInfiniBandPorts(t *testing.T) {
	sc, err := scenario.Parse([]byte(`devices:
  - {profile: cx7-1p-ndr, bdf: 0000:18:00.0, numa_node: 1}
  - profile: cx7-1p-ndr
    bdf: 0000:40:00.0
    ports: [{port: 1, ib: {lid: 2, width: 2x, state: init, partner_speeds: [hdr], link_recoveries_per_hour: 6}}]
  - profile: cx7-2p400g
    bdf: 0000:29:00.0
    functions: 2
    nv: {configured: {LINK_TYPE_P2: IB}}
`), "ib.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type port struct {
		Netdev, LinkType string
		IB               fw.IBSpec
	}
	var got []port
	for _, d := range sc.Devices {
		for _, f := range d.Functions {
			ps := d.Spec.Ports[f.Port-1]
			got = append(got, port{f.Netdev, ps.LinkType, ps.IB})
		}
	}
	want := []port{
		{"ibp24s0", fw.LinkInfiniBand, fw.IBSpec{LID: 3}},
		{"ibp64s0", fw.LinkInfiniBand, fw.IBSpec{LID: 2, Width: 2, State: fw.IBStateInit, PartnerSpeeds: []string{"HDR"}, LinkRecoveriesPerHour: 6}},
		{"ens3f0np0", fw.LinkEthernet, fw.IBSpec{}},
		{"ibp41s0f1", fw.LinkInfiniBand, fw.IBSpec{LID: 4}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if n := sc.Devices[0].NUMANode; n == nil || *n != 1 {
		t.Errorf("numa_node: %v, want 1", n)
	}
	if sc.Devices[1].NUMANode != nil {
		t.Errorf("numa_node not given: %v, want nil", *sc.Devices[1].NUMANode)
	}
	e, err := scenario.Build(sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := e.Adapters[1].Firmware.Ports()[0]
	if st.IBState != "Init" || st.Width != 2 || st.Protocol != "HDR" || st.LID != 0 {
		t.Errorf("built port: %+v; want HDR 2x in Init without a LID", st)
	}
}

func TestInfiniBandParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"ib on an Ethernet port", "devices:\n  - ports: [{port: 1, ib: {width: 2x}}]\n", "port 1 runs Ethernet (LINK_TYPE_P1=ETH)"},
		{"bad width", "devices:\n  - {profile: cx7-1p-ndr, ports: [{port: 1, ib: {width: 3x}}]}\n", "width must be 1x, 2x or 4x"},
		{"bad speed", "devices:\n  - {profile: cx7-1p-ndr, ports: [{port: 1, ib: {speeds: [GDR]}}]}\n", `unknown InfiniBand speed "GDR"`},
		{"bad state", "devices:\n  - {profile: cx7-1p-ndr, ports: [{port: 1, ib: {state: polling}}]}\n", "state must be active, armed or init"},
		{"LID 0", "devices:\n  - {profile: cx7-1p-ndr, ports: [{port: 1, ib: {lid: 0}}]}\n", "LID 0 is no LID"},
		{"multicast LID", "devices:\n  - {profile: cx7-1p-ndr, ports: [{port: 1, ib: {lid: 0xc000}}]}\n", "0..49151"},
		{"LID twice", "devices:\n  - {profile: cx7-1p-ndr, bdf: 18:00.0, ports: [{port: 1, ib: {lid: 9}}]}\n  - {profile: cx7-1p-ndr, bdf: 19:00.0, ports: [{port: 1, ib: {lid: 9}}]}\n", "LID 0x9 is given to"},
		{"bad numa", "devices:\n  - {numa_node: -1}\n", "numa_node must be a whole number 0..63"},
		{"MAC on IPoIB", "devices:\n  - {profile: cx7-1p-ndr, functions: [{mac: 'b8:3f:d2:00:00:01'}]}\n", "has no MAC to set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(tc.yaml), "s.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
