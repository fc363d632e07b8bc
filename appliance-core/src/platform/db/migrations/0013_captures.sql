-- Packet captures (spec part 3 "Capture", "Packet capture") and the chunk pointers that serve
-- GET /api/captures/{id}/chunks. docs/features/captures.md has the states and transitions.
--
-- The pcapng file lives in <data dir>/captures/ and is named from the id only
-- (`capture-<id>.pcapng`, stored in `file` for inspection; the code always derives it from the id
-- and never from request text). Chunks are pointers (offset, length) into that file: the blocks of
-- one flush of the splitter, read from the file when polled; they go with the capture.
CREATE TABLE captures (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL,                    -- the owner (non-sa callers see only their own)
  device_id INTEGER,                           -- the device the capture is restricted to, or NULL
  label TEXT,                                  -- max 255; never used in a path
  filter TEXT NOT NULL,                        -- the filter object as sent (JSON)
  bpf TEXT NOT NULL,                           -- the one BPF expression compiled from it
  ifaces TEXT NOT NULL,                        -- JSON array of the interfaces opened
  status TEXT NOT NULL CHECK (status IN ('starting', 'running', 'stopped', 'expired', 'failed')),
  engine TEXT,                                 -- 'dumpcap' or 'cap': the engine that captured
  reason TEXT,                                 -- why it ended: stopped, byte-cap, deadline, idle, restart, or the engine's error
  ephemeral INTEGER NOT NULL DEFAULT 0 CHECK (ephemeral IN (0, 1)),
  byte_cap INTEGER NOT NULL,
  deadline_s INTEGER NOT NULL,
  packets INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0,            -- bytes of pcapng written (what byte_cap bounds)
  drops INTEGER,                               -- the engine's drop count when it keeps one
  header_bytes INTEGER NOT NULL DEFAULT 0,     -- length of the SHB and IDBs at the file's start
  pid INTEGER,                                 -- the engine's process while active (restart clean-up)
  file TEXT NOT NULL,                          -- capture-<id>.pcapng
  created_at INTEGER NOT NULL,                 -- UTC ms
  started_at INTEGER,
  ended_at INTEGER,
  expires_at INTEGER,                          -- the deadline while active
  polled_at INTEGER                            -- last chunk poll (ephemeral idle expiry)
) STRICT;
CREATE INDEX captures_by_user ON captures (user_id, id);
CREATE INDEX captures_by_status ON captures (status, ended_at);
CREATE INDEX captures_by_device ON captures (device_id);

CREATE TABLE capture_chunks (
  capture_id INTEGER NOT NULL REFERENCES captures (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,                        -- 1, 2, 3 ... in file order
  offset INTEGER NOT NULL,
  length INTEGER NOT NULL,
  packets INTEGER NOT NULL,
  PRIMARY KEY (capture_id, seq)
) STRICT, WITHOUT ROWID;
