// Package firmware is the firmware lifecycle of an adapter without MFT:
// what an image file or MFA2 package holds (`cxray fw query FILE`), what
// the adapter runs and has stored (`cxray fw query -d`), the component
// update through the access registers as the kernel's mlxfw drives it
// (drivers/net/ethernet/mellanox/mlxfw/mlxfw_fsm.c: MCQS/MCQI to query,
// MCC to lock and drive the update state machine, MCDA for the data) and
// the firmware reset that makes a stored image run (dev/fwreset). See
// docs/firmware.md.
package firmware

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/cxray/cxray/internal/fwimage"
	"github.com/cxray/cxray/internal/fwimage/mfa2"
	"github.com/cxray/cxray/prm"
)

// MaxFileSize bounds the files read: the largest ConnectX image is well
// under it.
const MaxFileSize = 256 << 20

// File is a firmware file: one FS4 image or an MFA2 package.
type File struct {
	// Kind is "FS4" or "MFA2".
	Kind    string       `json:"kind"`
	Image   *ImageInfo   `json:"image,omitempty"`
	Package *PackageInfo `json:"package,omitempty"`
	raw     []byte
	pkg     *mfa2.Package
	im      *fwimage.Image
}

// ImageInfo is an image as `flint -i IMG query` shows it.
type ImageInfo struct {
	*fwimage.Image
	Version     string `json:"version"`
	ReleaseDate string `json:"release_date,omitempty"`
	BaseGUID    string `json:"base_guid,omitempty"`
	BaseMAC     string `json:"base_mac,omitempty"`
}

// PackageInfo is what an MFA2 package carries.
type PackageInfo struct {
	Size    int            `json:"size"`
	SHA256  string         `json:"sha256"`
	Version string         `json:"version,omitempty"`
	Boards  []PackageBoard `json:"boards"`
}

// PackageBoard is one PSID of a package and the images it has for it.
type PackageBoard struct {
	PSID     string   `json:"psid"`
	Versions []string `json:"versions"`
}

// InputError is a file that cannot be used (exit 2): errors.Is(err,
// prm.ErrInput) holds.
type InputError struct{ Err error }

func (e *InputError) Error() string        { return e.Err.Error() }
func (e *InputError) Unwrap() error        { return e.Err }
func (e *InputError) Is(target error) bool { return target == prm.ErrInput }

func inputErr(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// ReadFile reads a firmware file's bytes: an FS4 image, or an MFA2
// package (which starts with mfa2.Fingerprint). A file that is neither, or
// is cut short or damaged, is an InputError that says what is wrong.
func ReadFile(name string, data []byte) (*File, error) {
	if bytes.HasPrefix(data, []byte(mfa2.Fingerprint)) {
		p, err := mfa2.Parse(data)
		if err != nil {
			return nil, &InputError{fmt.Errorf("%s: not a usable MFA2 package: %w", name, err)}
		}
		info := &PackageInfo{Size: p.Size, SHA256: p.SHA256, Boards: []PackageBoard{}}
		if !p.Version.IsZero() {
			info.Version = p.Version.String()
		}
		for _, d := range p.Devices {
			b := PackageBoard{PSID: d.PSID, Versions: []string{}}
			for _, ci := range d.Components {
				b.Versions = append(b.Versions, p.Components[ci].Version.String())
			}
			info.Boards = append(info.Boards, b)
		}
		return &File{Kind: "MFA2", Package: info, raw: data, pkg: p}, nil
	}
	im, err := fwimage.Parse(data)
	if err != nil {
		return nil, &InputError{fmt.Errorf("%s: not a usable firmware image: %w", name, err)}
	}
	return &File{Kind: "FS4", Image: imageInfo(im), raw: data, im: im}, nil
}

func imageInfo(im *fwimage.Image) *ImageInfo {
	info := &ImageInfo{Image: im, Version: im.Version.String(), ReleaseDate: im.FormatDate()}
	if im.BaseGUID != 0 {
		info.BaseGUID = fmt.Sprintf("%016x", im.BaseGUID)
	}
	if im.BaseMAC != 0 {
		info.BaseMAC = fmt.Sprintf("%012x", im.BaseMAC)
	}
	return info
}

// ImageFor is the image the file has for a board (PSID): the file's one
// image, or the newest image an MFA2 package carries for the PSID. A
// package without the PSID is an InputError listing the ones it has.
func (f *File) ImageFor(psid string) ([]byte, *fwimage.Image, error) {
	if f.im != nil {
		return f.raw, f.im, nil
	}
	d, ok := f.pkg.Device(psid)
	if !ok {
		return nil, nil, inputErr("the package has no image for this adapter's PSID %s (it has: %s)", psid, strings.Join(f.pkg.PSIDs(), ", "))
	}
	best := slices.MaxFunc(d.Components, func(a, b int) int {
		return f.pkg.Components[a].Version.Compare(f.pkg.Components[b].Version)
	})
	data, err := f.pkg.Extract(best)
	if err != nil {
		return nil, nil, &InputError{fmt.Errorf("the package's image for %s: %w", psid, err)}
	}
	im, err := fwimage.Parse(data)
	if err != nil {
		return nil, nil, &InputError{fmt.Errorf("the package's image for %s is not a usable image: %w", psid, err)}
	}
	return data, im, nil
}
