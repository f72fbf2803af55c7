package firmware

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/internal/fwimage"
	"github.com/cxray/cxray/internal/fwimage/mfa2"
	"github.com/cxray/cxray/kernel"
)

// Update paths: the access registers (MCC/MCDA, cxray runs the flow) or
// devlink (the mlx5 driver runs the same flow, mlxfw, from a file).
const (
	ViaMCC     = "mcc"
	ViaDevlink = "devlink"
	ViaAuto    = "auto"
)

// ErrNoDevlink says the devlink path is not open for the adapter: no
// kernel view of it, or no driver bound.
var ErrNoDevlink = errors.New("the devlink path needs the mlx5 driver bound to the adapter (devlink dev info pci/BDF answers); use --via mcc")

// ChooseVia resolves "auto": devlink where the mlx5 driver is bound to
// the function (the kernel would otherwise run beside an update it does
// not know about), the registers elsewhere. devlink asked for where it is
// not available is ErrNoDevlink.
func ChooseVia(ctx context.Context, ad *adapter.Adapter, via string) (string, error) {
	switch via {
	case ViaMCC:
		return ViaMCC, nil
	case ViaDevlink, ViaAuto, "":
	default:
		return "", inputErr("--via %q: use devlink, mcc or auto", via)
	}
	bound := false
	if kd := ad.Kernel(); kd != nil {
		if info, err := kd.DevlinkInfo(ctx); err == nil && info.Driver != "" {
			bound = true
		} else if err != nil && ctx.Err() != nil {
			return "", err
		}
	}
	switch {
	case bound:
		return ViaDevlink, nil
	case via == ViaDevlink:
		return "", ErrNoDevlink
	}
	return ViaMCC, nil
}

// PrepareDevlink checks an image against the adapter as devlink shows it
// (PSID, running and stored versions) and makes the MFA2 package the
// driver takes: the file itself when it is one, else the image wrapped
// in one (mlxfw reads MFA2 only). The driver checks the hardware and the
// signature itself. Nothing is written.
func PrepareDevlink(ctx context.Context, ad *adapter.Adapter, f *File, o Options) (*Plan, error) {
	kd := ad.Kernel()
	if kd == nil {
		return nil, ErrNoDevlink
	}
	info, err := kd.DevlinkInfo(ctx)
	if err != nil {
		return nil, err
	}
	psid := info.PSID()
	if psid == "" {
		return nil, fmt.Errorf("devlink info of %s gives no fw.psid: the driver cannot say which images fit", ad.Name())
	}
	data, im, err := f.ImageFor(psid)
	if err != nil {
		return nil, err
	}
	if im.PSID != psid {
		return nil, inputErr("the image is for PSID %s; this adapter's PSID is %s: an image for another board is refused (it could make the adapter unusable)", im.PSID, psid)
	}
	p := &Plan{Device: ad.Name(), PSID: psid, From: info.FirmwareRunning(), Stored: info.FirmwareStored(), To: im.Version.String(), Size: len(data), Via: ViaDevlink}
	if cur, err := fwimage.ParseVersion(p.From); err == nil {
		p.Downgrade = im.Version.Compare(cur) < 0
		p.Same = im.Version.Compare(cur) == 0 && (p.Stored == "" || p.Stored == p.From)
	}
	if p.Downgrade && !o.AllowDowngrade {
		return nil, inputErr("the image (%s) is older than the running firmware (%s); add --allow-downgrade to install it", p.To, p.From)
	}
	if f.Kind == "MFA2" {
		p.pkg = f.raw
	} else if p.pkg, err = mfa2.Build(mfa2.Spec{Version: im.Version, Images: [][]byte{data}}); err != nil {
		return nil, fmt.Errorf("wrap the image in an MFA2 package for devlink: %w", err)
	}
	return p, nil
}

// UpdateDevlink stages the plan's package in the kernel's firmware folder
// and asks devlink to flash it, reporting the driver's progress; the file
// is removed afterwards. Stopping (ctx) stops the wait only: the kernel
// finishes an update it started, and the driver releases its handle
// itself (mlxfw_fsm.c).
func UpdateDevlink(ctx context.Context, ad *adapter.Adapter, p *Plan, o Options) error {
	kd := ad.Kernel()
	if kd == nil || p.pkg == nil {
		return ErrNoDevlink
	}
	sum := sha256.Sum256(p.pkg)
	name, cleanup, err := kd.StageFirmware(fmt.Sprintf("%s-%x-%d.mfa2", p.PSID, sum[:6], os.Getpid()), p.pkg)
	if err != nil {
		return err
	}
	defer cleanup()
	return kd.FlashUpdate(ctx, name, func(st kernel.FlashStatus) {
		if o.Progress != nil {
			o.Progress(phaseOf(st.Msg), int(st.Done), int(st.Total))
		}
	})
}

// phaseOf names mlxfw's status messages as the register path's phases.
func phaseOf(msg string) string {
	m := strings.ToLower(msg)
	for _, p := range []string{"erase", "download", "verify", "activat"} {
		if strings.Contains(m, p) {
			if p == "activat" {
				return "activate"
			}
			return p
		}
	}
	return m
}
