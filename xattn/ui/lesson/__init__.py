"""The lesson on the page: which lesson a page teaches (the server's lessons, a class's own,
a lecturer's upload), the Lesson view and its prediction controls."""
