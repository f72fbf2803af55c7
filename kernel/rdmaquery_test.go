package kernel

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"

	"github.com/cxray/cxray/internal/linuxabi"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// fakeRDMA answers the device list (mlx5_0 at index 3, mlx5_1 at 4) and
// raw QP requests for QP 0x108 on device 3.
func fakeRDMA(t *testing.T, raw []byte, refuse error) func() (*netlink.Conn, error) {
	return func() (*netlink.Conn, error) {
		return nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
			req := reqs[0]
			h := func(typ netlink.HeaderType, f netlink.HeaderFlags) netlink.Header {
				return netlink.Header{Type: typ, Flags: f, Sequence: req.Header.Sequence, PID: req.Header.PID}
			}
			switch req.Header.Type {
			case rdmaMsgType(nldevCmdGet):
				var out []netlink.Message
				for i, n := range []string{"mlx5_0", "mlx5_1"} {
					ae := netlink.NewAttributeEncoder()
					ae.Uint32(nldevAttrDevIndex, uint32(3+i))
					ae.String(nldevAttrDevName, n)
					b, _ := ae.Encode()
					out = append(out, netlink.Message{Header: h(req.Header.Type, netlink.Multi), Data: b})
				}
				return append(out, netlink.Message{Header: h(netlink.Done, netlink.Multi), Data: make([]byte, 4)}), nil
			case RawOp(ResQP):
				if refuse != nil {
					return nil, refuse
				}
				var dev, qpn uint32
				walkAttrs(req.Data, func(typ uint16, b []byte) error {
					switch typ {
					case nldevAttrDevIndex:
						dev = u32(b)
					case nldevAttrResLQPN:
						qpn = u32(b)
					}
					return nil
				})
				if dev != 3 || qpn != 0x108 {
					return nil, linuxabi.ENOENT
				}
				ae := netlink.NewAttributeEncoder()
				ae.Uint32(nldevAttrDevIndex, dev)
				ae.Uint32(nldevAttrResLQPN, qpn)
				ae.Bytes(nldevAttrResRaw, raw)
				b, _ := ae.Encode()
				return []netlink.Message{{Header: h(req.Header.Type, 0), Data: b}}, nil
			}
			t.Errorf("unexpected request type %d", req.Header.Type)
			return nil, linuxabi.EINVAL
		}), nil
	}
}

func TestRawResourceQuery(t *testing.T) {
	raw := bytes.Repeat([]byte{0x5a}, 64)
	d := &Device{RDMA: "mlx5_0", opts: Options{DialRDMA: fakeRDMA(t, raw, nil)}}
	r, err := d.RawResource(context.Background(), ResQP, 0x108)
	if err != nil || r.ID != 0x108 || r.DevIndex != 3 || !bytes.Equal(r.Raw, raw) {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := d.RawResource(context.Background(), ResQP, 0x109); err == nil {
		t.Error("a QP the kernel does not have was found")
	}
	other := &Device{RDMA: "mlx5_9", opts: Options{DialRDMA: fakeRDMA(t, raw, nil)}}
	var nf *NotFoundError
	if _, err := other.RawResource(context.Background(), ResQP, 0x108); !errors.As(err, &nf) {
		t.Errorf("a device not in the list: %v", err)
	}
	denied := &Device{RDMA: "mlx5_0", opts: Options{DialRDMA: fakeRDMA(t, raw, linuxabi.EPERM)}}
	var pe *PermissionError
	if _, err := denied.RawResource(context.Background(), ResQP, 0x108); !errors.As(err, &pe) {
		t.Errorf("without CAP_NET_ADMIN: %v", err)
	}
	none := &Device{}
	var ue *UnsupportedError
	if _, err := none.RawResource(context.Background(), ResQP, 1); !errors.As(err, &ue) {
		t.Errorf("no RDMA device: %v", err)
	}
}

// A dump lists every raw QP and MR of the device, and only its own (the
// fake kernel's RDMA netlink); one by number still works over the same
// fake, and without CAP_NET_ADMIN the dump says so.
func TestRawResourcesDump(t *testing.T) {
	seg := func(i uint32) []byte { return kerneltest.ResourceSegment(0x1001, i, bytes.Repeat([]byte{byte(i)}, 8)) }
	k := &kerneltest.Kernel{RDMA: map[string]kerneltest.RDMADevice{
		"mlx5_0": {Index: 3, QPs: []kerneltest.RawObject{{ID: 0x108, Raw: seg(0x108)}, {ID: 0x109, Raw: seg(0x109)}},
			MRs: []kerneltest.RawObject{{ID: 4, LKey: 0x10203, Raw: seg(0x102)}}},
		"mlx5_1": {Index: 4, QPs: []kerneltest.RawObject{{ID: 0x200, Raw: seg(0x200)}}},
	}}
	d := &Device{RDMA: "mlx5_0", opts: Options{DialRDMA: k.DialRDMA}}
	qps, err := d.RawResources(context.Background(), ResQP)
	if err != nil {
		t.Fatal(err)
	}
	want := []RawResource{{Kind: ResQP, ID: 0x108, DevIndex: 3, Raw: seg(0x108)}, {Kind: ResQP, ID: 0x109, DevIndex: 3, Raw: seg(0x109)}}
	if diff := cmp.Diff(want, qps); diff != "" {
		t.Errorf("raw QPs (-want +got):\n%s", diff)
	}
	mrs, err := d.RawResources(context.Background(), ResMR)
	if err != nil || len(mrs) != 1 || mrs[0].LKey != 0x10203 || mrs[0].ID != 4 {
		t.Errorf("raw MRs: %+v %v", mrs, err)
	}
	if r, err := d.RawResource(context.Background(), ResQP, 0x109); err != nil || r.ID != 0x109 {
		t.Errorf("one raw QP: %+v %v", r, err)
	}
	k.NoCapNetAdmin = true
	var pe *PermissionError
	if _, err := d.RawResources(context.Background(), ResQP); !errors.As(err, &pe) {
		t.Errorf("a dump without CAP_NET_ADMIN: %v", err)
	}
}
