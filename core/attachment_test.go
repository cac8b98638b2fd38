package core

import "testing"

func TestAttachmentKind(t *testing.T) {
	for _, tt := range []struct{ mediaType, name, want string }{
		{"image/png", "a", AttachmentImage},
		{"IMAGE/JPEG; q=1", "a", AttachmentImage},
		{"image/svg+xml", "logo.svg", AttachmentFile},
		{"text/plain; charset=utf-8", "a", AttachmentText},
		{"application/json", "a", AttachmentText},
		{"application/pdf", "notes.txt", AttachmentFile},
		{"", "notes.md", AttachmentText},
		{"application/octet-stream", "shot.PNG", AttachmentImage},
		{"", "archive.zip", AttachmentFile},
		{"", "README", AttachmentFile},
	} {
		if got := AttachmentKind(tt.mediaType, tt.name); got != tt.want {
			t.Errorf("AttachmentKind(%q, %q) = %q, want %q", tt.mediaType, tt.name, got, tt.want)
		}
	}
}

func TestAttachmentSandboxPath(t *testing.T) {
	for _, tt := range []struct{ id, name, want string }{
		{"att_01abcdef123456", "report.pdf", "/workspace/attachments/123456-report.pdf"},
		{"att_01abcdef123456", "../../etc/passwd", "/workspace/attachments/123456-_.._etc_passwd"},
		{"att_01abcdef123456", "..", "/workspace/attachments/123456-file"},
		{"att_01abcdef123456", "a\nb", "/workspace/attachments/123456-a_b"},
	} {
		if got := (Attachment{ID: tt.id, Name: tt.name}).SandboxPath(); got != tt.want {
			t.Errorf("SandboxPath(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 5000: "4.9 KiB", 12 << 10: "12 KiB", 10 << 20: "10 MiB", 25 << 20: "25 MiB", 3 << 30: "3.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
