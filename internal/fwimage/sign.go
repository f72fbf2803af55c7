package fwimage

import (
	"crypto/hmac"
	"crypto/sha256"
)

// The emulated adapters' signature: not NVIDIA's (real images are signed
// with NVIDIA's private keys, which nobody outside has), but one that
// plays the same part in the update flow. The IMAGE_SIGNATURE_256 section
// holds a key ID in its signature_uuid field and an HMAC-SHA256 of the
// image in its signature field; the HMAC covers the image from its start
// to the end of its last ITOC section, with the signature section and its
// ITOC entry read as zeros. The device data (DTOC) is per board and is not
// covered, as on real images.

var emulatorKey = []byte("cxray emulated ConnectX firmware signing key")

const emulatorKeyID = "cxray-emulator-1"

// SignatureCheck is what the emulated adapter finds when it checks an
// image's signature.
type SignatureCheck int

const (
	SignatureOK SignatureCheck = iota
	// SignatureMissing: the image has no signature section.
	SignatureMissing
	// SignatureUnknownKey: signed with a key the device does not know.
	SignatureUnknownKey
	// SignatureBad: the signature does not match the image.
	SignatureBad
)

func (c SignatureCheck) String() string {
	return [...]string{"ok", "unsigned", "unknown key", "bad signature"}[c]
}

func sign(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// signedBytes is what the signature covers.
func (im *Image) signedBytes(data []byte) []byte {
	end := min(im.itocEnd, len(data))
	b := append([]byte(nil), data[im.Start:end]...)
	zero := func(off, n int) {
		off -= im.Start
		for i := max(off, 0); i < off+n && i < len(b); i++ {
			b[i] = 0
		}
	}
	if im.Signed {
		zero(im.sigAt, signatureSize)
		zero(im.sigEntry, tocEntrySize)
	}
	return b
}

// CheckSignature checks the emulator's signature of an image Parse read
// from data.
func (im *Image) CheckSignature(data []byte) SignatureCheck {
	if !im.Signed || im.sigAt+signatureSize > len(data) {
		return SignatureMissing
	}
	sig := data[im.sigAt : im.sigAt+signatureSize]
	if string(sig[0:16]) != emulatorKeyID {
		return SignatureUnknownKey
	}
	if !hmac.Equal(sig[32:32+sha256.Size], sign(emulatorKey, im.signedBytes(data))) {
		return SignatureBad
	}
	return SignatureOK
}
