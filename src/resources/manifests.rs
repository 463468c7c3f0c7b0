//! `Manifests`: the compiled catalog the evaluate and identify systems read. Immutable during a
//! tick; an embedder swaps the whole `Arc` to reload.

use crate::manifest::Catalog;
use bevy_ecs::resource::Resource;
use std::sync::Arc;

/// The compiled manifests.
#[derive(Resource, Debug, Clone)]
pub struct Manifests(pub Arc<Catalog>);
