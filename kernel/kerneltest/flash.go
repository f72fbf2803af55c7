package kerneltest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"

	"github.com/cxray/cxray/internal/linuxabi"
)

// DevlinkConfigGroup is the fake's ID of devlink's "config" multicast
// group.
const DevlinkConfigGroup = 7

// FlashNote is one DEVLINK_CMD_FLASH_UPDATE_STATUS notification.
type FlashNote struct {
	Msg, Component       string
	Done, Total, Timeout uint64
}

// FlashScript is how the fake driver answers `devlink dev flash` on one
// handle: the status notifications it sends while it works, then its
// answer: success (Errno 0), or an errno with the driver's extended ack
// message, as mlxfw reports a refused image.
type FlashScript struct {
	Status []FlashNote
	Errno  syscall.Errno
	ExtAck string
	// Stored, when set, becomes the instance's stored fw.version on
	// success (what `devlink dev info` shows next).
	Stored string
}

// ReloadScript is how the fake answers `devlink dev reload action
// fw_activate`: an errno with an extended ack, or success (the stored
// version starts running, and the kernel says fw_activate was performed).
type ReloadScript struct {
	Errno  syscall.Errno
	ExtAck string
}

// FlashRequest is one flash request the fake received, with the file's
// contents as the driver would have read them from FirmwareDir.
type FlashRequest struct {
	Handle, File string
	Data         []byte
	// Joined says the requester listened on the config group (it would
	// see the progress).
	Joined bool
}

// ReloadRequest is one reload request the fake received.
type ReloadRequest struct {
	Handle string
	Action uint8
}

// flashSocket is a netlink.Socket that answers devlink flash and reload
// as the kernel does: notifications to members of the config group, one
// per datagram, then the answer with an extended ack. Every other request
// goes to inner (genltest).
type flashSocket struct {
	k      *Kernel
	inner  *genetlink.Conn
	joined map[uint32]bool
	queue  [][]netlink.Message
}

func (s *flashSocket) Close() error { return s.inner.Close() }

func (s *flashSocket) JoinGroup(g uint32) error {
	if s.joined == nil {
		s.joined = map[uint32]bool{}
	}
	s.joined[g] = true
	return nil
}

func (s *flashSocket) LeaveGroup(g uint32) error {
	delete(s.joined, g)
	return nil
}

func (s *flashSocket) SendMessages(ms []netlink.Message) error {
	for _, m := range ms {
		if err := s.Send(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *flashSocket) Send(m netlink.Message) error {
	var gm genetlink.Message
	if len(m.Data) > 0 {
		if err := gm.UnmarshalBinary(m.Data); err != nil {
			return err
		}
	}
	if m.Header.Type == DevlinkFamilyID {
		switch gm.Header.Command {
		case linuxabi.DEVLINK_CMD_FLASH_UPDATE:
			s.queue = append(s.queue, s.k.flash(m, gm, s.joined[DevlinkConfigGroup])...)
			return nil
		case linuxabi.DEVLINK_CMD_RELOAD:
			s.queue = append(s.queue, s.k.reload(m, gm)...)
			return nil
		}
	}
	if _, err := s.inner.Send(gm, uint16(m.Header.Type), m.Header.Flags); err != nil {
		return err
	}
	_, nms, err := s.inner.Receive()
	var oe *netlink.OpError
	var errno syscall.Errno
	switch {
	case errors.As(err, &oe) && errors.As(oe.Err, &errno):
		msgs, _ := nltest.Error(int(errno), []netlink.Message{m})
		s.queue = append(s.queue, msgs)
		return nil
	case err != nil:
		return err
	}
	for i := range nms {
		nms[i].Header.Sequence, nms[i].Header.PID = m.Header.Sequence, m.Header.PID
	}
	s.queue = append(s.queue, nms)
	return nil
}

// Receive returns one datagram. With nothing queued it fails as a socket
// whose deadline passed, rather than block a test.
func (s *flashSocket) Receive() ([]netlink.Message, error) {
	if len(s.queue) == 0 {
		return nil, os.ErrDeadlineExceeded
	}
	b := s.queue[0]
	s.queue = s.queue[1:]
	return b, nil
}

func (s *flashSocket) ReceiveIter() iter.Seq2[netlink.Message, error] {
	return func(yield func(netlink.Message, error) bool) {
		ms, err := s.Receive()
		if err != nil {
			yield(netlink.Message{}, err)
			return
		}
		for _, m := range ms {
			if !yield(m, nil) {
				return
			}
		}
	}
}

// FlashRequests returns the flash requests received so far.
func (k *Kernel) FlashRequests() []FlashRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]FlashRequest(nil), k.flashes...)
}

// ReloadRequests returns the reload requests received so far.
func (k *Kernel) ReloadRequests() []ReloadRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]ReloadRequest(nil), k.reloads...)
}

func handleAttrs(b []byte, extra func(*netlink.AttributeDecoder)) (string, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return "", err
	}
	var bus, dev string
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.DEVLINK_ATTR_BUS_NAME:
			bus = ad.String()
		case linuxabi.DEVLINK_ATTR_DEV_NAME:
			dev = ad.String()
		default:
			extra(ad)
		}
	}
	return bus + "/" + dev, ad.Err()
}

func (k *Kernel) flash(m netlink.Message, gm genetlink.Message, joined bool) [][]netlink.Message {
	var file string
	handle, err := handleAttrs(gm.Data, func(ad *netlink.AttributeDecoder) {
		if ad.Type() == linuxabi.DEVLINK_ATTR_FLASH_UPDATE_FILE_NAME {
			file = ad.String()
		}
	})
	if err != nil {
		return [][]netlink.Message{ack(m, linuxabi.EINVAL, err.Error())}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	req := FlashRequest{Handle: handle, File: file, Joined: joined}
	sc, ok := k.Flash[handle]
	if !ok {
		k.flashes = append(k.flashes, req)
		return [][]netlink.Message{ack(m, linuxabi.EOPNOTSUPP, "")}
	}
	// The kernel reads the file before the driver sees anything
	// (net/devlink/dev.c: request_firmware, relative to the firmware
	// folder; no way out of it).
	data, rerr := os.ReadFile(filepath.Join(k.FirmwareDir, filepath.Clean("/"+file)))
	req.Data = data
	k.flashes = append(k.flashes, req)
	if k.FirmwareDir == "" || rerr != nil {
		return [][]netlink.Message{ack(m, linuxabi.ENOENT, "failed to locate the requested firmware file")}
	}
	var out [][]netlink.Message
	if joined {
		note := func(cmd uint8, f func(*netlink.AttributeEncoder)) {
			ae := netlink.NewAttributeEncoder()
			bus, dev, _ := splitHandle(handle)
			ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, bus)
			ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, dev)
			if f != nil {
				f(ae)
			}
			b, _ := ae.Encode()
			gb, _ := (&genetlink.Message{Header: genetlink.Header{Command: cmd, Version: 1}, Data: b}).MarshalBinary()
			out = append(out, []netlink.Message{{Header: netlink.Header{Type: DevlinkFamilyID}, Data: gb}})
		}
		note(linuxabi.DEVLINK_CMD_FLASH_UPDATE, nil)
		for _, st := range sc.Status {
			note(linuxabi.DEVLINK_CMD_FLASH_UPDATE_STATUS, func(ae *netlink.AttributeEncoder) {
				ae.String(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_MSG, st.Msg)
				if st.Component != "" {
					ae.String(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_COMPONENT, st.Component)
				}
				ae.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_DONE, st.Done)
				ae.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_TOTAL, st.Total)
				if st.Timeout != 0 {
					ae.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_TIMEOUT, st.Timeout)
				}
			})
		}
		note(linuxabi.DEVLINK_CMD_FLASH_UPDATE_END, nil)
	}
	if sc.Errno == 0 && sc.Stored != "" {
		info := k.Devlink[handle]
		info.Stored = setVersion(info.Stored, "fw.version", sc.Stored)
		k.Devlink[handle] = info
	}
	return append(out, ack(m, sc.Errno, sc.ExtAck))
}

func (k *Kernel) reload(m netlink.Message, gm genetlink.Message) [][]netlink.Message {
	var action uint8
	handle, err := handleAttrs(gm.Data, func(ad *netlink.AttributeDecoder) {
		if ad.Type() == linuxabi.DEVLINK_ATTR_RELOAD_ACTION {
			action = ad.Uint8()
		}
	})
	if err != nil {
		return [][]netlink.Message{ack(m, linuxabi.EINVAL, err.Error())}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reloads = append(k.reloads, ReloadRequest{Handle: handle, Action: action})
	sc, ok := k.Reload[handle]
	if !ok {
		return [][]netlink.Message{ack(m, linuxabi.EOPNOTSUPP, "")}
	}
	if action != linuxabi.DEVLINK_RELOAD_ACTION_FW_ACTIVATE {
		return [][]netlink.Message{ack(m, linuxabi.EOPNOTSUPP, "the fake answers fw_activate only")}
	}
	if sc.Errno != 0 {
		return [][]netlink.Message{ack(m, sc.Errno, sc.ExtAck)}
	}
	// The stored image runs now.
	info := k.Devlink[handle]
	for _, nv := range info.Stored {
		if nv[0] == "fw.version" {
			info.Running = setVersion(info.Running, "fw.version", nv[1])
			info.Running = setVersion(info.Running, "fw", nv[1])
		}
	}
	k.Devlink[handle] = info
	bus, dev, _ := splitHandle(handle)
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, bus)
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, dev)
	bf := make([]byte, 8) // bitfield32: value, selector
	binary.NativeEndian.PutUint32(bf, 1<<linuxabi.DEVLINK_RELOAD_ACTION_FW_ACTIVATE)
	binary.NativeEndian.PutUint32(bf[4:], 1<<linuxabi.DEVLINK_RELOAD_ACTION_FW_ACTIVATE)
	ae.Bytes(linuxabi.DEVLINK_ATTR_RELOAD_ACTIONS_PERFORMED, bf)
	b, _ := ae.Encode()
	gb, _ := (&genetlink.Message{Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_RELOAD, Version: 1}, Data: b}).MarshalBinary()
	reply := netlink.Message{Header: netlink.Header{Type: DevlinkFamilyID, Sequence: m.Header.Sequence, PID: m.Header.PID}, Data: gb}
	return [][]netlink.Message{{reply}, ack(m, 0, "")}
}

func setVersion(list [][2]string, name, v string) [][2]string {
	for i := range list {
		if list[i][0] == name {
			list[i][1] = v
			return list
		}
	}
	return append(list, [2]string{name, v})
}

func splitHandle(h string) (string, string, error) {
	for i := range h {
		if h[i] == '/' {
			return h[:i], h[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("handle %q", h)
}

// ack is the kernel's answer to a request: NLMSG_ERROR with the errno (0:
// the acknowledgement) and the request's header, capped, followed by the
// extended ack's message when there is one (NLMSGERR_ATTR_MSG).
func ack(req netlink.Message, errno syscall.Errno, msg string) []netlink.Message {
	b := make([]byte, 4+16)
	binary.NativeEndian.PutUint32(b, uint32(-int32(errno)))
	h := req.Header
	binary.NativeEndian.PutUint32(b[4:], 16)
	binary.NativeEndian.PutUint16(b[8:], uint16(h.Type))
	binary.NativeEndian.PutUint16(b[10:], uint16(h.Flags))
	binary.NativeEndian.PutUint32(b[12:], h.Sequence)
	binary.NativeEndian.PutUint32(b[16:], h.PID)
	flags := netlink.HeaderFlags(0x100) // NLM_F_CAPPED
	if msg != "" {
		ae := netlink.NewAttributeEncoder()
		ae.String(1, msg) // NLMSGERR_ATTR_MSG
		tlv, _ := ae.Encode()
		b = append(b, tlv...)
		flags |= netlink.AcknowledgeTLVs
	}
	return []netlink.Message{{Header: netlink.Header{Type: netlink.Error, Flags: flags, Sequence: h.Sequence, PID: h.PID}, Data: b}}
}
