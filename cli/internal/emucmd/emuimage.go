package emucmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/fwimage"
	"github.com/cxray/cxray/internal/fwimage/mfa2"
)

type emuImageOptions struct {
	profile, version, out string
	psid, signature       string
	released              string
	size                  int
	mfa2                  bool
}

func (a *app) emuImageCmd() *cobra.Command { return a.newEmuImageCmd(nil) }

// newEmuImageCmd wires the flags to emuImageOptions; runF (tests) replaces runEmuImage.
func (a *app) newEmuImageCmd(runF func(*emuImageOptions, []string) error) *cobra.Command {
	var o emuImageOptions
	c := &cobra.Command{
		Use:   "image --version V --out FILE",
		Short: "Write a synthetic firmware image (FS4 .bin, or MFA2 with --mfa2) that an emulated profile accepts",
		Long: `Write a firmware image for an emulated adapter: the FS4 layout with every
CRC right (mstflint -i FILE query and verify read it), the profile's PSID and
hardware ID, the version given, and a signature the emulator, and nothing
else, verifies. It holds no firmware code. 'cxray fw update -d emu FILE'
installs it; 'cxray fw query FILE' reads it.

--psid, --signature (none, bad, unknown-key) and --version older than the
profile's make the images the emulator refuses, for trying the error paths.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runEmuImage(a.Ctx, &o)
		},
	}
	c.Flags().StringVar(&o.profile, "profile", scenario.DefaultProfile, "emulator profile the image is for ('cxray emu profiles')")
	c.Flags().StringVar(&o.version, "version", "", "firmware version, major.minor.sub_minor (28.40.1000)")
	c.Flags().StringVar(&o.out, "out", "", "file to write")
	c.Flags().StringVar(&o.psid, "psid", "", "PSID (default: the profile's)")
	c.Flags().StringVar(&o.signature, "signature", "emulator", "signature: emulator (accepted), none, bad, unknown-key")
	c.Flags().StringVar(&o.released, "released", "", "release date YYYY-MM-DD (default 2024-01-01)")
	c.Flags().IntVar(&o.size, "size", 0, "file size in bytes, a multiple of 4096 from 32768 (default 65536)")
	c.Flags().BoolVar(&o.mfa2, "mfa2", false, "wrap the image in an MFA2 package")
	return c
}

func (a *app) runEmuImage(ctx context.Context, o *emuImageOptions) error {
	if o.version == "" || o.out == "" {
		return cmdutil.UsageErr("give --version V and --out FILE")
	}
	v, err := fwimage.ParseVersion(o.version)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	p, err := scenario.LookupProfile(o.profile)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	sign := map[string]fwimage.Signing{"emulator": fwimage.SignEmulator, "none": fwimage.SignNone, "bad": fwimage.SignBadKey, "unknown-key": fwimage.SignUnknownKey}
	sg, ok := sign[strings.ToLower(o.signature)]
	if !ok {
		return cmdutil.UsageErr("--signature %q: use emulator, none, bad or unknown-key", o.signature)
	}
	spec := fwimage.Spec{Version: v, PSID: p.Spec.PSID, HWID: uint32(p.Spec.HWDevID), PCIDeviceID: p.Spec.PCIDeviceID,
		PartNumber: p.Spec.PartNumber, Description: p.Spec.Description, Size: o.size, Signature: sg, Secure: p.Spec.Secure,
		BaseGUID: p.Spec.BaseGUID, BaseMAC: p.Spec.BaseMAC}
	if o.psid != "" {
		spec.PSID = o.psid
	}
	if o.released != "" {
		t, err := time.Parse("2006-01-02", o.released)
		if err != nil {
			return cmdutil.UsageErr("--released %q: give YYYY-MM-DD", o.released)
		}
		spec.Released = t.Add(12 * time.Hour)
	}
	b, err := fwimage.Build(spec)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if o.mfa2 {
		if b, err = mfa2.Build(mfa2.Spec{Version: v, Images: [][]byte{b}}); err != nil {
			return cmdutil.UsageWrap(err)
		}
	}
	if err := os.WriteFile(o.out, b, 0o644); err != nil {
		return cmdutil.UsageErr("%v", err)
	}
	if !a.JSON() {
		fmt.Fprintf(a.Stdout, "%s: firmware %s for %s (PSID %s), %d bytes\n", o.out, v, p.Name, spec.PSID, len(b))
	}
	return nil
}
