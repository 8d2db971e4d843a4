"""The app shell: main window, menus, preferences, notifications, single instance, About."""
