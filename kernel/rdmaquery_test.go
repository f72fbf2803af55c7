package kernel

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"

	"github.com/cxray/cxray/internal/linuxabi"
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
