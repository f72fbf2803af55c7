package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
)

// FlashStatus is one status notification of `devlink dev flash`
// (DEVLINK_CMD_FLASH_UPDATE_STATUS on devlink's "config" multicast
// group): mlxfw sends "Preparing to flash", "Erasing", "Downloading"
// with bytes done and total, "Verifying", "Activating"
// (drivers/net/ethernet/mellanox/mlxfw/mlxfw_fsm.c).
type FlashStatus struct {
	Msg       string `json:"msg"`
	Component string `json:"component,omitempty"`
	Done      uint64 `json:"done,omitempty"`
	Total     uint64 `json:"total,omitempty"`
	// Timeout is how long the driver waits for this step, in seconds
	// (0: not given).
	Timeout uint64 `json:"timeout_s,omitempty"`
}

// FirmwareDir is the folder the kernel's firmware loader reads the files
// FlashUpdate names from.
func (d *Device) FirmwareDir() string {
	if d.opts.FirmwareDir != "" {
		return d.opts.FirmwareDir
	}
	return "/lib/firmware"
}

// FlashError is a flash or reload the kernel refused, with the driver's
// own explanation (the extended ack) when it gave one.
type FlashError struct {
	What   string // "devlink dev flash pci/0000:c1:00.0"
	Errno  error
	ExtAck string
}

func (e *FlashError) Error() string {
	msg := fmt.Sprintf("kernel: %s: %v", e.What, e.Errno)
	if e.ExtAck != "" {
		msg += ": " + e.ExtAck
	}
	return msg
}

func (e *FlashError) Unwrap() error { return e.Errno }

// flashErr makes a FlashError of a failed request.
func flashErr(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("kernel: %s: %w (the kernel did not answer in time; the driver may still be working: check 'devlink dev info' before retrying)", what, cerr)
	}
	var oe *netlink.OpError
	if errors.As(err, &oe) {
		fe := &FlashError{What: what, Errno: oe.Err, ExtAck: oe.Message}
		if errors.Is(oe.Err, os.ErrPermission) {
			fe.ExtAck = joinMsg(fe.ExtAck, "this needs CAP_NET_ADMIN: run as root")
		}
		return fe
	}
	return fmt.Errorf("kernel: %s: %v", what, err)
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// FlashUpdate is `devlink dev flash pci/BDF file NAME`: the driver reads
// NAME from the firmware folder (FirmwareDir) and runs the update itself
// (mlx5 hands it to mlxfw, the same MCC/MCDA flow cxray runs over the
// registers; it takes MFA2 packages only). progress sees the driver's
// status notifications as they come; the call returns when the kernel
// answers the request: nil once the image is stored, else a FlashError.
func (d *Device) FlashUpdate(ctx context.Context, name string, progress func(FlashStatus)) error {
	what := "devlink dev flash pci/" + d.BDF
	c, fam, unbind, err := d.genl(ctx, linuxabi.DEVLINK_GENL_NAME)
	if err != nil {
		return err
	}
	defer func() { unbind(); c.Close() }()
	// Status notifications go to the "config" group only; without it the
	// update still runs, silently.
	for _, g := range fam.Groups {
		if g.Name == linuxabi.DEVLINK_GENL_MCGRP_CONFIG_NAME {
			if err := c.JoinGroup(g.ID); err != nil {
				return fmt.Errorf("kernel: %s: joining devlink's %s group for its progress: %v", what, g.Name, err)
			}
		}
	}
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, "pci")
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, d.BDF)
	ae.String(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_FILE_NAME, name)
	body, err := ae.Encode()
	if err != nil {
		return fmt.Errorf("kernel: encoding the devlink request: %v", err)
	}
	req, err := c.Send(genetlink.Message{
		Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_FLASH_UPDATE, Version: fam.Version},
		Data:   body,
	}, fam.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return flashErr(ctx, what, err)
	}
	// The answer to the request ends the update; notifications (sequence
	// 0) come before it. Bounded: a driver sends a few per step and one per
	// downloaded block, never more than this.
	for range maxFlashMessages {
		gms, nms, err := c.Receive()
		if err != nil {
			return flashErr(ctx, what, err)
		}
		for i, nm := range nms {
			if nm.Header.Type == netlink.Error {
				if nm.Header.Sequence == req.Header.Sequence {
					return nil // the acknowledgement (errors came as err)
				}
				continue
			}
			if gms[i].Header.Command != linuxabi.DEVLINK_CMD_FLASH_UPDATE_STATUS {
				continue // FLASH_UPDATE (begin) and FLASH_UPDATE_END
			}
			bus, dev, st, err := parseFlashStatus(gms[i].Data)
			if err != nil {
				return fmt.Errorf("kernel: %s: a status notification: %v", what, err)
			}
			if bus+"/"+dev == "pci/"+d.BDF && progress != nil {
				progress(st)
			}
		}
	}
	return fmt.Errorf("kernel: %s: more than %d messages without the kernel's answer", what, maxFlashMessages)
}

// maxFlashMessages bounds the wait for the answer to a flash request (a
// 64 MiB image in mlxfw's progress steps is far below it).
const maxFlashMessages = 1 << 20

// parseFlashStatus decodes a DEVLINK_CMD_FLASH_UPDATE_STATUS notification.
func parseFlashStatus(b []byte) (bus, dev string, st FlashStatus, err error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return "", "", st, err
	}
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.DEVLINK_ATTR_BUS_NAME:
			bus = ad.String()
		case linuxabi.DEVLINK_ATTR_DEV_NAME:
			dev = ad.String()
		case linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_MSG:
			st.Msg = ad.String()
		case linuxabi.DEVLINK_ATTR_FLASH_UPDATE_COMPONENT:
			st.Component = ad.String()
		case linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_DONE:
			st.Done = ad.Uint64()
		case linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_TOTAL:
			st.Total = ad.Uint64()
		case linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_TIMEOUT:
			st.Timeout = ad.Uint64()
		}
	}
	return bus, dev, st, ad.Err()
}

// ReloadFWActivate is `devlink dev reload pci/BDF action fw_activate`: the
// driver lets go of the adapter, the firmware resets so the stored image
// runs, and the driver comes back (mlx5 sends MFRL with the driver-synced
// flow itself: drivers/net/ethernet/mellanox/mlx5/core/devlink.c). It
// returns the actions the kernel says it performed.
func (d *Device) ReloadFWActivate(ctx context.Context) ([]string, error) {
	what := "devlink dev reload pci/" + d.BDF + " action fw_activate"
	c, fam, unbind, err := d.genl(ctx, linuxabi.DEVLINK_GENL_NAME)
	if err != nil {
		return nil, err
	}
	defer func() { unbind(); c.Close() }()
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, "pci")
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, d.BDF)
	ae.Uint8(linuxabi.DEVLINK_ATTR_RELOAD_ACTION, linuxabi.DEVLINK_RELOAD_ACTION_FW_ACTIVATE)
	body, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("kernel: encoding the devlink request: %v", err)
	}
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_RELOAD, Version: fam.Version},
		Data:   body,
	}, fam.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return nil, flashErr(ctx, what, err)
	}
	var done []string
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, fmt.Errorf("kernel: %s: %v", what, err)
		}
		for ad.Next() {
			if ad.Type() != linuxabi.DEVLINK_ATTR_RELOAD_ACTIONS_PERFORMED {
				continue
			}
			// A bitfield32: value, then selector.
			b := ad.Bytes()
			if len(b) < 4 {
				continue
			}
			v := ad.ByteOrder.Uint32(b[:4])
			for bit, name := range reloadActions {
				if v&(1<<bit) != 0 {
					done = append(done, name)
				}
			}
		}
	}
	return done, nil
}

// reloadActions name DEVLINK_RELOAD_ACTION_* by number (uapi
// linux/devlink.h).
var reloadActions = map[int]string{1: "driver_reinit", 2: "fw_activate"}

// StageFirmware writes data into the firmware folder under a name of its
// own and returns the name to flash and a function that removes it. A
// file that is there already with other contents is never overwritten.
func (d *Device) StageFirmware(name string, data []byte) (string, func(), error) {
	dir := filepath.Join(d.FirmwareDir(), "cxray")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("kernel: the firmware folder %s: %v (devlink reads images from there; run as root)", dir, err)
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, fmt.Errorf("kernel: staging the image for devlink: %v", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return "", nil, fmt.Errorf("kernel: staging the image for devlink: %v", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", nil, fmt.Errorf("kernel: staging the image for devlink: %v", err)
	}
	return "cxray/" + name, func() { os.Remove(path) }, nil
}
