"""A class in a room, on the lecturer's page: joining and driving the room, the class's panels,
the host's devices and who a browser is."""
