"""What every other package may use and that uses none of them: writing files safely."""
