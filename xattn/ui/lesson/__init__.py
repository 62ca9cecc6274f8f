"""The lesson on the page: which lesson a page teaches, the Lesson view, the prediction
controls, the answer's charts, and a step's prepared weights (what a room asks about)."""
