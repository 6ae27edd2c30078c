"""Long-lived context: token budgets, the conversation window, working memory and episodes."""
