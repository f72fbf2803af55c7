package peers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nsrun"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/prm/builtin"
)

func TestMain(m *testing.M) {
	nsrun.Child(build)
	os.Exit(m.Run())
}

const (
	bdf  = "0000:03:00.0"
	psid = "MT_0000000834"
)

// adapter is the payload: what to vary between tests.
type adapter struct {
	FW   string `json:"fw"`
	PSID string `json:"psid"`
}

// build powers on a two-port ConnectX-7 from the firmware model, with the
// PCI identity (ICMD GET_FW_INFO) agreeing with the firmware (MGIR, MCQI).
func build(payload []byte) ([]sysfs.DeviceEntry, error) {
	var a adapter
	if err := json.Unmarshal(payload, &a); err != nil {
		return nil, err
	}
	ver, err := fw.ParseVersion(a.FW)
	if err != nil {
		return nil, err
	}
	db, err := builtin.Load()
	if err != nil {
		return nil, err
	}
	protos := []string{"400GAUI-4", "200GAUI-4", "100GAUI-2", "CAUI-4", "25GAUI-1"}
	spec := fw.Spec{
		Name: "peer-test", PCIDeviceID: 0x1021, HWDevID: 0x218,
		FW: ver, FWBuildTime: time.Date(2023, 10, 5, 17, 43, 12, 0, time.UTC),
		PSID: a.PSID, PartNumber: "EMU-CX7-2P400G", Description: "Emulated ConnectX-7 2x400GbE",
		BaseMAC: 0xb83fd2a1b2c0, Seed: 7,
		Ports: []fw.PortSpec{
			{Module: 0, Lanes: 4, Protocols: protos},
			{Module: 1, Lanes: 4, Protocols: protos},
		},
		Modules: []fw.ModuleSpec{{}, {}},
	}
	f, err := fw.New(fw.Config{DB: db, Spec: spec})
	if err != nil {
		return nil, err
	}
	id := emu.ConnectX7()
	id.FWMajor, id.FWMinor, id.FWSubMinor = ver.Major, ver.Minor, ver.SubMinor
	id.FWBuildTime, id.PSID = spec.FWBuildTime, spec.PSID
	dev := emu.New(emu.Config{Identity: id, Firmware: f})
	return []sysfs.DeviceEntry{{BDF: bdf, Dev: dev, NUMANode: -1, Netdevs: []string{"eth2"}, RDMA: []string{"mlx5_0"}, Driver: "mlx5_core"}}, nil
}

func skipLoudly(t *testing.T, why string) {
	t.Helper()
	msg := fmt.Sprintf("SKIPPING %s: %s", t.Name(), why)
	fmt.Fprintln(os.Stderr, "*** "+msg)
	t.Skip(msg)
}

// peer runs an mstflint tool against the emulated adapter.
func peer(t *testing.T, a adapter, timeout time.Duration, argv ...string) string {
	t.Helper()
	if err := nsrun.Check(); err != nil {
		skipLoudly(t, err.Error())
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		skipLoudly(t, argv[0]+" is not installed (Debian/Ubuntu: apt-get install mstflint)")
	}
	b, _ := json.Marshal(a)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out, errb bytes.Buffer
	code, err := nsrun.Run(ctx, nsrun.Spec{Payload: b}, argv, nil, &out, &errb)
	t.Logf("%q -> %d, %v\nstdout:\n%s\nstderr:\n%s", argv, code, err, out.String(), errb.String())
	if err != nil || code != 0 {
		t.Fatalf("%s failed: %d, %v", argv[0], code, err)
	}
	return out.String()
}

func field(t *testing.T, out, label, want string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + `:?\s+(.*?)\s*$`)
	m := re.FindStringSubmatch(out)
	if m == nil || m[1] != want {
		t.Errorf("%s: got %q, want %q", label, m, want)
	}
}

// TestMstflintQuery: `mstflint -d BDF q` reads the firmware version and
// PSID through the firmware-component registers (MCAM, MCQS, MCQI, MGIR,
// MQIS).
func TestMstflintQuery(t *testing.T) {
	out := peer(t, adapter{FW: "28.39.1010", PSID: psid}, 60*time.Second, "mstflint", "-d", bdf, "q")
	field(t, out, "FW Version", "28.39.1010")
	field(t, out, "PSID", psid)
}

// TestMstlink: mstlink reads the port through PDDR, PTYS, PAOS and ICMD
// GET_FW_INFO.
func TestMstlink(t *testing.T) {
	out := peer(t, adapter{FW: "28.39.1010", PSID: psid}, 60*time.Second, "mstlink", "-d", bdf)
	out = regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(out, "")
	field(t, out, "Firmware Version", ": 28.39.1010")
}

// TestMstregMGIR: mstreg decodes the firmware model's MGIR.
func TestMstregMGIR(t *testing.T) {
	out := peer(t, adapter{FW: "28.41.2000", PSID: "MT_0000000999"}, 60*time.Second,
		"mstreg", "-d", bdf, "--reg_name", "MGIR", "--get")
	for _, f := range [][2]string{{"extended_major", "0x0000001c"}, {"extended_minor", "0x00000029"},
		{"extended_sub_minor", "0x000007d0"}, {"device_id", "0x00001021"}, {"psid[12]", "0x00000039"}} {
		field(t, out, f[0], "| "+f[1])
	}
}
