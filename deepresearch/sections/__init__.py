"""The deep graph's sections: the dependent-outline scheduler, section tasks and budgets, and running one section's research and writing."""
