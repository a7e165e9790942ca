"""Which engine answers and how it is sized: the factory, the session, the planner's report, model setup."""
