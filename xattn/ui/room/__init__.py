"""A class in a room, on the lecturer's page: joining and driving the room, the class's panels,
the host's devices and who a browser is; a step as the class sees it (its prepared weights,
what it tells of them, its answer's charts, its follow-ups), the same on every phone."""
