package cmdif_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/prm"
)

// On an InfiniBand port QUERY_HCA_VPORT_CONTEXT answers the logical state
// the subnet manager left (Active, Init), the physical state, the LIDs;
// QUERY_HCA_CAP's port_type says IB. An Ethernet function answers
// ETHERNET and refuses the IB query.
func TestHCAVportContext(t *testing.T) {
	r := build(t, parse(t, `devices:
  - {profile: cx7-1p-ndr, bdf: 0000:18:00.0, ports: [{port: 1, ib: {lid: 0x21, sm_lid: 0x5}}]}
  - {profile: cx7-1p-ndr, bdf: 0000:40:00.0, ports: [{port: 1, ib: {state: init}}]}
  - {profile: cx7-2p400g, bdf: 0000:29:00.0}
`))
	ctx := ctxT(t)
	q := func(i int) map[string]uint64 {
		out, err := r.device(t, i).Command(ctx, "QUERY_HCA_VPORT_CONTEXT", []prm.Assignment{{Path: "port_num", Value: "1"}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]uint64{}
		for _, n := range []string{"port_state", "port_physical_state", "lid", "sm_lid"} {
			got[n] = field(t, out, "hca_vport_context."+n)
		}
		return got
	}
	if diff := cmp.Diff(map[string]uint64{"port_state": 4, "port_physical_state": 5, "lid": 0x21, "sm_lid": 5}, q(0)); diff != "" {
		t.Errorf("active port (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]uint64{"port_state": 2, "port_physical_state": 5, "lid": 0, "sm_lid": 0}, q(1)); diff != "" {
		t.Errorf("port without a subnet manager (-want +got):\n%s", diff)
	}
	// The PF's node and port GUID, the adapter's system image GUID.
	out, err := r.device(t, 0).Command(ctx, "QUERY_HCA_VPORT_CONTEXT", []prm.Assignment{{Path: "port_num", Value: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	spec := r.e.Adapters[0].Firmware.Spec()
	if n, p, s := field(t, out, "hca_vport_context.node_guid"), field(t, out, "hca_vport_context.port_guid"), field(t, out, "hca_vport_context.system_image_guid"); n != spec.NodeGUID(1) || p != n || s != spec.BaseGUID || n == 0 {
		t.Errorf("GUIDs node %x port %x system %x; want %x, %x, %x", n, p, s, spec.NodeGUID(1), spec.NodeGUID(1), spec.BaseGUID)
	}
	_, err = r.device(t, 2).Command(ctx, "QUERY_HCA_VPORT_CONTEXT", []prm.Assignment{{Path: "port_num", Value: "1"}})
	if !errors.Is(err, fwctl.ErrBadParam) {
		t.Errorf("Ethernet function: %v, want bad parameter", err)
	}
	for i, want := range []uint64{0, 0, 1} { // IB 0, ETHERNET 1
		out, err := r.device(t, i).Command(ctx, "QUERY_HCA_CAP", []prm.Assignment{{Path: "op_mod", Value: "1"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := field(t, out, "capability.cmd_hca_cap.port_type"); got != want {
			t.Errorf("function %d port_type %d, want %d", i, got, want)
		}
	}
}
