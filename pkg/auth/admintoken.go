package auth

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// AdminUser is the user of the token EnsureAdminToken makes.
const AdminUser = "admin"

// EnsureAdminToken returns the admin token kept in the file at path,
// making one from random (32 bytes, hex) and writing it there, mode 0600,
// when the file does not exist; created says it did. The token is the
// only line of the file; its user is AdminUser.
func EnsureAdminToken(path string, random io.Reader) (users *Users, created bool, err error) {
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		secret := make([]byte, 32)
		if _, err := io.ReadFull(random, secret); err != nil {
			return nil, false, err
		}
		data = []byte(hex.EncodeToString(secret) + "\n")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, false, err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return nil, false, err
		}
		if err := f.Close(); err != nil {
			return nil, false, err
		}
		created = true
	default:
		return nil, false, err
	}
	token := strings.TrimSpace(string(data))
	users, err = ParseTokens(strings.NewReader(token + "," + AdminUser + "," + string(RoleAdmin)))
	if err != nil {
		return nil, false, fmt.Errorf("%s: not an admin token (want %d or more characters of A-Z a-z 0-9 - . _ ~ + / =): delete it to make a new one", path, minTokenLength)
	}
	return users, created, nil
}
