package store

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// KeySize is the size in bytes of a secret key file: an AES-256 key.
const KeySize = 32

// Sealed value layout, version 1:
//
//	version (1 byte, = 1) | key id (4 bytes) | nonce (12 bytes) | AES-GCM ciphertext and tag
//
// The version byte lets a later release rotate keys or change the scheme
// while still opening old values; the key id (the first bytes of SHA-256 of
// the key) says which key sealed a value. Both are authenticated as part of
// the associated data.
const (
	sealVersion1 byte = 1
	keyIDSize         = 4
	headerSize        = 1 + keyIDSize
)

// ErrCannotUnseal is returned by Sealer.Open when a value does not
// authenticate: it was tampered with, sealed under another key, or sealed
// with different associated data (another object key). It wraps no errdefs
// class: it is an internal error (data corruption or a wrong key file), not
// something a caller can fix by retrying.
var ErrCannotUnseal = errors.New("cannot unseal value")

// Sealer encrypts values with AES-256-GCM and a random 12-byte nonce per
// value. It is safe for concurrent use.
type Sealer struct {
	aead        cipher.AEAD
	fingerprint [sha256.Size]byte // SHA-256 of the key; its first bytes are the key id
}

// NewSealer returns a Sealer for a KeySize-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret key is %d bytes, want %d: %w", len(key), KeySize, errdefs.ErrInvalidArgument)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Sealer{aead: aead, fingerprint: sha256.Sum256(key)}, nil
}

// Fingerprint identifies the key without revealing it: the hex SHA-256 of
// the key file's bytes (what `sha256sum secret.key` prints). Its first
// 2*keyIDSize digits are the key id in every value the key seals.
func (s *Sealer) Fingerprint() string { return hex.EncodeToString(s.fingerprint[:]) }

func (s *Sealer) keyID() []byte { return s.fingerprint[:keyIDSize] }

// sealedThis reports whether sealed carries this key's id: it was sealed
// by this key (or is damaged, which Open finds out).
func (s *Sealer) sealedThis(sealed []byte) bool {
	return len(sealed) >= headerSize && sealed[0] == sealVersion1 && bytes.Equal(sealed[1:headerSize], s.keyID())
}

// Seal encrypts plaintext bound to associatedData (the store passes the
// object key); Open must be given the same associatedData.
func (s *Sealer) Seal(plaintext, associatedData []byte) ([]byte, error) {
	nonceSize := s.aead.NonceSize()
	out := make([]byte, headerSize+nonceSize, headerSize+nonceSize+len(plaintext)+s.aead.Overhead())
	out[0] = sealVersion1
	copy(out[1:headerSize], s.keyID())
	nonce := out[headerSize:]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: reading random nonce: %w", err)
	}
	return s.aead.Seal(out, nonce, plaintext, s.additionalData(out[:headerSize], associatedData)), nil
}

// Open authenticates and decrypts a value made by Seal. Any mismatch (a
// flipped bit, another key, other associated data) fails with
// ErrCannotUnseal; the error never contains the value.
func (s *Sealer) Open(sealed, associatedData []byte) ([]byte, error) {
	nonceSize := s.aead.NonceSize()
	if len(sealed) < headerSize+nonceSize+s.aead.Overhead() {
		return nil, fmt.Errorf("sealed value is %d bytes, too short: %w", len(sealed), ErrCannotUnseal)
	}
	if sealed[0] != sealVersion1 {
		return nil, fmt.Errorf("sealed value has unknown format version %d: %w", sealed[0], ErrCannotUnseal)
	}
	if !bytes.Equal(sealed[1:headerSize], s.keyID()) {
		return nil, fmt.Errorf("sealed value was sealed with key id %x, this key is %x: %w", sealed[1:headerSize], s.keyID(), ErrCannotUnseal)
	}
	nonce := sealed[headerSize : headerSize+nonceSize]
	plaintext, err := s.aead.Open(nil, nonce, sealed[headerSize+nonceSize:], s.additionalData(sealed[:headerSize], associatedData))
	if err != nil {
		return nil, fmt.Errorf("sealed value does not authenticate (tampered, or associated data differs): %w", ErrCannotUnseal)
	}
	return plaintext, nil
}

// additionalData authenticates the fixed-size header together with the
// caller's associated data.
func (s *Sealer) additionalData(header, associatedData []byte) []byte {
	ad := make([]byte, 0, len(header)+len(associatedData))
	return append(append(ad, header...), associatedData...)
}

// LoadOrCreateKey reads the KeySize-byte key at path, creating it from
// crypto/rand with mode 0600 (and its directory with 0700) when it does not
// exist. It refuses, with errdefs.ErrInvalidArgument, a key file of the
// wrong size or one readable or writable by group or others. Concurrent
// first starts agree on one key: the file appears atomically and a loser
// reads the winner's key.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := LoadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	return createKey(path)
}

// LoadKey reads the KeySize-byte key at path, with the checks of
// LoadOrCreateKey; a missing file is an error wrapping fs.ErrNotExist.
func LoadKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secret key file %q: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secret key file %q: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secret key file %q is not a regular file: %w", path, errdefs.ErrInvalidArgument)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("secret key file %q has mode %04o; it must not be accessible by group or others (chmod 600 %s): %w",
			path, perm, path, errdefs.ErrInvalidArgument)
	}
	if info.Size() != KeySize {
		return nil, fmt.Errorf("secret key file %q is %d bytes, want exactly %d: %w", path, info.Size(), KeySize, errdefs.ErrInvalidArgument)
	}
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("secret key file %q: %w", path, err)
	}
	return key, nil
}

func createKey(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secret key directory %q: %w", dir, err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating secret key: %w", err)
	}
	// Write a private temporary file, then link it into place: the key file
	// never exists half-written and an existing one is never replaced.
	tmp, err := os.CreateTemp(dir, ".secret-key-*")
	if err != nil {
		return nil, fmt.Errorf("secret key file %q: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := writeAndSync(tmp, key); err != nil {
		return nil, fmt.Errorf("secret key file %q: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return LoadKey(path)
		}
		return nil, fmt.Errorf("secret key file %q: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: make the new directory entry durable
		d.Close()
	}
	return key, nil
}

func writeAndSync(f *os.File, data []byte) error {
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
