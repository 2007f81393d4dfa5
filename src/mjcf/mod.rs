//! MJCF reader: XML → typed description (includes and default classes resolved) → compiled
//! [`Model<f64>`](crate::Model).
