"""Intention resolution (Yerukola et al. 2024; Hu et al. 2022): the released CSV and its data module."""
