package firmware

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/internal/fwimage"
	"github.com/cxray/cxray/prm"
)

// Register access for the update flow. Every layout comes from the
// register database (MCC, MCDA, MCQS, MCQI: PRM "Firmware Update"
// registers); requests are encoded through its plans.

// regs sends MCC and MCDA and reads MCQS and MCQI on one device.
type regs struct {
	d *dev.Device
}

func idx(kv ...string) []prm.Assignment {
	var as []prm.Assignment
	for i := 0; i+1 < len(kv); i += 2 {
		as = append(as, prm.Assignment{Path: kv[i], Value: kv[i+1]})
	}
	return as
}

func u(d *prm.Decoded, path string) uint64 {
	v, err := d.Get(path)
	if err != nil {
		return 0
	}
	return v.Uint()
}

func enumName(d *prm.Decoded, path string) string {
	v, err := d.Get(path)
	if err != nil {
		return ""
	}
	if n, ok := v.EnumName(); ok {
		return n
	}
	return strconv.FormatUint(v.Uint(), 10)
}

// mcqs reads one component's status.
func (r regs) mcqs(ctx context.Context, i int) (*prm.Decoded, error) {
	rd, err := r.d.Get(ctx, "MCQS", idx("component_index", strconv.Itoa(i), "device_index", "0", "device_type", "0"), nil, 0)
	if err != nil {
		return nil, fmt.Errorf("read component %d's status (MCQS): %w", i, err)
	}
	return rd.Decoded, nil
}

// mcqi reads one info type of a component (0 CAPABILITIES, 1 VERSION, 5
// ACTIVATION_METHOD); pending reads the stored (pending) image's.
func (r regs) mcqi(ctx context.Context, comp, infoType int, pending bool) (*prm.Decoded, error) {
	p := "0"
	if pending {
		p = "1"
	}
	rd, err := r.d.GetFields(ctx, "MCQI", idx("component_index", strconv.Itoa(comp), "device_index", "0", "device_type", "0", "read_pending_component", p),
		idx("info_type", strconv.Itoa(infoType), "offset", "0", "data_size", "0x7c"))
	if err != nil {
		return nil, fmt.Errorf("read component %d's information (MCQI info_type %d): %w", comp, infoType, err)
	}
	return rd.Decoded, nil
}

// version reads MCQI VERSION: the version and build time.
func (r regs) version(ctx context.Context, comp int, pending bool) (*Version, error) {
	d, err := r.mcqi(ctx, comp, 1, pending)
	if err != nil {
		return nil, err
	}
	p := "data.mcqi_version_ext."
	v := Version{}
	if s, err := d.Get(p + "version_string"); err == nil {
		txt := string(s.Raw())
		if s.IsText() {
			txt = s.TextString()
		}
		if parsed, err := fwimage.ParseVersion(strings.Trim(txt, "\x00 \"")); err == nil {
			v.Version = parsed.String()
		}
	}
	if v.Version == "" {
		if _, err := d.Get(p + "version"); err != nil {
			return nil, fmt.Errorf("the register database (%s) does not lay out MCQI's version data; decode with a newer one (--adb)", r.d.DB.Revision)
		}
		n := u(d, p+"version")
		v.Version = fwimage.Version{Major: uint16(n >> 24), Minor: uint16(n >> 16 & 0xFF), SubMinor: uint16(n & 0xFFFF)}.String()
	}
	if u(d, p+"build_time_valid") != 0 {
		v.Built = bcdDate(u(d, p+"build_time.year"), u(d, p+"build_time.month"), u(d, p+"build_time.day"))
	}
	return &v, nil
}

// bcdDate reads a BCD date (year 0x2023) as 2023-10-05; "" when invalid.
func bcdDate(y, m, d uint64) string {
	n := func(v uint64) int {
		x, err := strconv.Atoi(strconv.FormatUint(v, 16))
		if err != nil {
			return -1
		}
		return x
	}
	yy, mm, dd := n(y), n(m), n(d)
	if yy < 2000 || mm < 1 || mm > 12 || dd < 1 || dd > 31 {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", yy, mm, dd)
}

// mccState is MCC's answer.
type mccState struct {
	State      string
	StateNum   int
	Error      int
	Progress   int
	Handle     uint32
	Owner      string
	IdleSecond int
}

func (r regs) mccGet(ctx context.Context, comp int) (*mccState, error) {
	rd, err := r.d.Get(ctx, "MCC", idx("component_index", strconv.Itoa(comp), "device_index", "0", "device_type", "0"), nil, 0)
	if err != nil {
		return nil, fmt.Errorf("read the update state machine (MCC): %w", err)
	}
	return decodeMCC(rd.Decoded), nil
}

func decodeMCC(d *prm.Decoded) *mccState {
	return &mccState{State: enumName(d, "control_state"), StateNum: int(u(d, "control_state")), Error: int(u(d, "error_code")),
		Progress: int(u(d, "control_progress")), Handle: uint32(u(d, "update_handle")), Owner: ownerName(int(u(d, "handle_owner_type"))),
		IdleSecond: int(u(d, "time_elapsed_since_last_cmd"))}
}

// ownerName names MCC handle_owner_type (PRM MCC: the path the handle was
// taken through).
func ownerName(t int) string {
	switch t {
	case 0:
		return "unspecified"
	case 1:
		return "chassis BMC"
	case 2:
		return "MAD"
	case 3:
		return "BMC"
	case 4:
		return "command interface (a driver)"
	case 5:
		return "ICMD (a tool)"
	}
	return fmt.Sprintf("type %d", t)
}

// set writes a register and decodes its answer.
func (r regs) set(ctx context.Context, name string, as []prm.Assignment, data []byte) (*prm.Decoded, error) {
	reg, err := r.d.DB.Register(name)
	if err != nil {
		return nil, err
	}
	p, err := r.d.DB.RegisterPlan(reg)
	if err != nil {
		return nil, err
	}
	buf := p.NewBuffer()
	if err := p.Encode(buf, as); err != nil {
		return nil, err
	}
	if data != nil {
		start, room, ok := dataSpan(p)
		if !ok || len(data) > room {
			return nil, fmt.Errorf("%s has no room for %d data bytes in this register database", name, len(data))
		}
		copy(buf[start:], data)
	}
	out, err := r.d.Transfer(ctx, dev.Set, reg.Name, buf, 0, 0)
	if err != nil {
		return nil, err
	}
	return p.Decode(out)
}

// dataSpan is where MCDA's data array lies and how many bytes it holds.
func dataSpan(p *prm.Plan) (start, n int, ok bool) {
	for _, l := range p.Leaves() {
		if l.Path == "data" && l.Bit%8 == 0 && l.Width%8 == 0 && !l.Variable {
			return l.Bit / 8, l.Width * max(l.Count, 1) / 8, true
		}
	}
	return 0, 0, false
}

func (r regs) mcc(ctx context.Context, instruction, comp int, handle uint32, size int) (*mccState, error) {
	as := idx("instruction", strconv.Itoa(instruction), "component_index", strconv.Itoa(comp), "update_handle", strconv.FormatUint(uint64(handle), 10))
	if size > 0 {
		as = append(as, prm.Assignment{Path: "component_size", Value: strconv.Itoa(size)})
	}
	d, err := r.set(ctx, "MCC", as, nil)
	if err != nil {
		return nil, err
	}
	return decodeMCC(d), nil
}
