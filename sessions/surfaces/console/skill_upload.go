package console

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// uploadField is the name refusals of a skill upload are shown under: the
// form's zip and folder inputs share it.
const uploadField = "upload"

// uploadSkill sends the request's upload to the API: a new skill, or the
// next version of skill id when id is set. A refusal, the form's or the
// API's, comes back in fe with the status to answer; err is a failure.
func (h *Handler) uploadSkill(r *http.Request, id string) (sk *core.Skill, fe formErrors, status int, err error) {
	contentType, body, msg, err := skillBundle(r.MultipartForm)
	if err != nil {
		return nil, fe, 0, err
	}
	if msg != "" {
		return nil, formErrors{Fields: map[string]string{uploadField: msg}}, http.StatusBadRequest, nil
	}
	if id == "" {
		sk, err = h.api.CreateSkill(r.Context(), contentType, body)
	} else {
		sk, err = h.api.UpdateSkill(r.Context(), id, contentType, body)
	}
	if err == nil {
		return sk, fe, 0, nil
	}
	fe, status, ok := refusal(err)
	if !ok {
		return nil, fe, 0, err
	}
	// Whatever the API refuses (the front matter, a path, the size) is
	// about the files chosen.
	if fe.Form != "" {
		fe = formErrors{Fields: map[string]string{uploadField: fe.Form}}
	}
	return nil, fe, status, nil
}

// skillBundle is the upload as the API takes it: a zip chosen in the
// form's "zip" input passes as it is; the files of a folder chosen in its
// "folder" input are zipped under their paths relative to the folder
// chosen. msg says what is wrong with the form's choice, if anything.
func skillBundle(form *multipart.Form) (contentType string, body []byte, msg string, err error) {
	var zips, folder []*multipart.FileHeader
	if form != nil {
		zips, folder = chosen(form.File["zip"]), chosen(form.File["folder"])
	}
	switch {
	case len(zips) == 0 && len(folder) == 0:
		return "", nil, "Choose a zip of the skill's folder, or the folder itself, to upload.", nil
	case len(zips) > 0 && len(folder) > 0:
		return "", nil, "Choose a zip or a folder, not both.", nil
	case len(zips) > 1:
		return "", nil, "Choose one zip.", nil
	case len(zips) == 1:
		b, err := readUpload(zips[0])
		return "application/zip", b, "", err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, fh := range folder {
		b, err := readUpload(fh)
		if err != nil {
			return "", nil, "", err
		}
		f, err := zw.Create(relativePath(fh))
		if err != nil {
			return "", nil, "", fmt.Errorf("zip the folder: %w", err)
		}
		if _, err := f.Write(b); err != nil {
			return "", nil, "", fmt.Errorf("zip the folder: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return "", nil, "", fmt.Errorf("zip the folder: %w", err)
	}
	return "application/zip", buf.Bytes(), "", nil
}

// chosen drops the empty part a browser sends for an input left empty.
func chosen(files []*multipart.FileHeader) []*multipart.FileHeader {
	var out []*multipart.FileHeader
	for _, fh := range files {
		if fh.Filename != "" {
			out = append(out, fh)
		}
	}
	return out
}

// relativePath is a folder upload's file's path within the folder chosen
// ("deploy/scripts/release.sh"), as the browser names it. Go's multipart
// reader keeps only the last element in Filename, so it is read from the
// part's header; the API checks it like any path of an archive.
func relativePath(fh *multipart.FileHeader) string {
	if _, params, err := mime.ParseMediaType(fh.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		return params["filename"]
	}
	return fh.Filename
}

func readUpload(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("read the upload %q: %w", fh.Filename, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read the upload %q: %w", fh.Filename, err)
	}
	return b, nil
}
