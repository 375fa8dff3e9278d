//! Placeholder: the requirement registry derived from `spec/` lands here.
