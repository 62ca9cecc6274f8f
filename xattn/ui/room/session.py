"""What a page keeps of its room in ``st.session_state``: the names of its keys."""

from __future__ import annotations

__all__ = ["MADE", "JOINED", "FAILED", "LAST", "KEYS", "OLD_KEYS", "HOST_ERROR"]


MADE = "_xattn_room_made"      # session: the room this session made (one per session)


JOINED = "_xattn_room_joined"  # session: the room this session has already drawn


FAILED = "_xattn_room_failed"  # session: the link's class could not be joined


LAST = "_xattn_room_last"      # session: the last RoomView read (shown while the store is out)


KEYS = "_xattn_host_keys"      # session: room code -> the host key this page drives it with


OLD_KEYS = "_xattn_old_keys"   # session: host keys a new one replaced (this device signed out)


HOST_ERROR = "_xattn_room_error"   # session: what the store said to a host's last action
